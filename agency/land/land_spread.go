package land

import (
	"context"
	"sync"
	"time"
)

// verifyStack verifies the top of the stack, and when it fails bisects
// for the longest green prefix: green is its length, culprit the index of
// the first red candidate (-1 when all passed).
//
// With k ≥ 2 hosts in agency.verify.hosts the checks are spread over them:
// each round checks up to k prefixes at once, each starting at a host of
// its own. The first round checks the top and, speculatively, k-1 prefixes
// evenly spaced below it; each later round k prefixes evenly spaced
// between the longest known green prefix and the shortest known red one.
// A check being deterministic, that finds the same green prefix and
// culprit as one check at a time (k = 1, which this is exactly: the top,
// then the midpoints), in about log_{k+1} rounds instead of log_2.
func (a *Lander) verifyStack(ctx context.Context, stack []*candidate, timeout time.Duration) (green, culprit int, err error) {
	k := max(a.Host.VerifyHostCount(), 1)
	return searchStack(len(stack), k, func(probes []int) ([]bool, error) {
		return a.verifyProbes(ctx, stack, probes, timeout, k > 1 && len(probes) > 1)
	})
}

// searchStack is verifyStack's search over a stack of n, check running
// one round's probes (prefix lengths) and saying which passed.
func searchStack(n, k int, check func(probes []int) ([]bool, error)) (green, culprit int, err error) {
	lo, hi := 0, n // prefix lo is green (0: nothing); prefix hi red once checked
	probes := spreadProbes(lo, hi, k, true)
	for {
		passed, err := check(probes)
		if err != nil {
			return lo, -1, err
		}

		if probes[0] == n && passed[0] {
			return n, -1, nil // the top passed: all of it lands
		}

		for i, p := range probes {
			if !passed[i] && p < hi {
				hi = p
			}
		}
		for i, p := range probes {
			if passed[i] && p > lo && p < hi {
				lo = p
			}
		}

		if hi-lo <= 1 {
			return lo, hi - 1, nil
		}
		probes = spreadProbes(lo, hi, k, false)
	}
}

// spreadProbes are the prefixes (by length) a round checks: up to k,
// evenly spaced strictly between lo and hi, and with top hi itself first
// (taking one of the k).
func spreadProbes(lo, hi, k int, top bool) []int {
	var ps []int
	m := k
	if top {
		ps, m = append(ps, hi), k-1
	}

	m = min(m, hi-lo-1)
	for j := 1; j <= m; j++ {
		ps = append(ps, lo+j*(hi-lo)/(m+1))
	}

	return ps
}

// verifyProbes checks the prefixes probes of stack (prefix p ends with
// stack[p-1]), one after the other; spread: at once, the i-th starting at the i-th host of
// agency.verify.hosts (each with its own verify tree, record and ref, and
// no lock held while they run). passed[i] is the i-th's outcome; err the
// first error that is not a red check.
func (a *Lander) verifyProbes(ctx context.Context, stack []*candidate, probes []int, timeout time.Duration, spread bool) ([]bool, error) {
	passed := make([]bool, len(probes))
	if !spread {
		for i, p := range probes {
			ok, err := a.verifyStacked(ctx, stack[p-1], timeout)
			if err != nil {
				return nil, err
			}
			passed[i] = ok
		}
		return passed, nil
	}

	failed := make([]error, len(probes))
	var wg sync.WaitGroup
	for i, p := range probes {
		c := stack[p-1]
		c.slot = i + 1
		wg.Go(func() { passed[i], failed[i] = a.verifyStacked(ctx, c, timeout) })
	}
	wg.Wait()

	for _, err := range failed {
		if err != nil {
			return nil, err
		}
	}
	return passed, nil
}
