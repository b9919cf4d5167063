package land

import (
	"slices"
	"testing"
)

// The search spread over k hosts finds the same green prefix and culprit
// as the one-at-a-time bisection (k = 1), for every stack size and every
// culprit, checks each prefix at most once, and takes fewer rounds.
func TestSearchStackSpreadSameOutcome(t *testing.T) {
	for n := 1; n <= 16; n++ {
		for red := 0; red <= n; red++ { // red == n: all green; else stack[red] is the culprit
			want := [2]int{red, red}
			if red == n {
				want = [2]int{n, -1}
			}

			seqRounds := 0
			for k := 1; k <= 5; k++ {
				rounds, seen := 0, map[int]bool{}
				green, culprit, err := searchStack(n, k, func(probes []int) ([]bool, error) {
					rounds++
					if len(probes) == 0 || len(probes) > k {
						t.Fatalf("n=%d k=%d: a round of %v", n, k, probes)
					}
					var out []bool
					for _, p := range probes {
						if seen[p] || p < 1 || p > n {
							t.Fatalf("n=%d k=%d: prefix %d checked twice or out of range (%v)", n, k, p, probes)
						}
						seen[p] = true
						out = append(out, p <= red)
					}
					return out, nil
				})
				if err != nil || [2]int{green, culprit} != want {
					t.Fatalf("n=%d red=%d k=%d: green %d culprit %d, want %v", n, red, k, green, culprit, want)
				}
				if k == 1 {
					seqRounds = rounds
				} else if rounds > seqRounds {
					t.Fatalf("n=%d red=%d k=%d: %d rounds, one at a time %d", n, red, k, rounds, seqRounds)
				}
			}
		}
	}
}

// One host: the top, then the midpoints, as the bisection always did.
func TestSpreadProbesOneHostIsBisection(t *testing.T) {
	if got := spreadProbes(0, 5, 1, true); !slices.Equal(got, []int{5}) {
		t.Fatalf("first round: %v", got)
	}
	if got := spreadProbes(2, 5, 1, false); !slices.Equal(got, []int{3}) {
		t.Fatalf("midpoint: %v", got)
	}
	if got := spreadProbes(0, 8, 3, true); !slices.Equal(got, []int{8, 2, 5}) {
		t.Fatalf("top and two speculative prefixes: %v", got)
	}
}
