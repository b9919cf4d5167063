package agency

import (
	"context"
	"os/exec"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/git-agency/git-agency/gitcore"
	"github.com/git-agency/git-agency/store"
)

// countingRunner counts the git commands it runs.
// The forecast runs git from several goroutines at once.
type countingRunner struct {
	n    atomic.Int64
	mu   sync.Mutex
	args [][]string
}

func (c *countingRunner) Run(ctx context.Context, cmd gitcore.Cmd) (gitcore.Result, error) {
	c.n.Add(1)
	c.mu.Lock()
	c.args = append(c.args, cmd.Args)
	c.mu.Unlock()
	return gitcore.ExecRunner{}.Run(ctx, cmd)
}

func TestForecastPairsAndCache(t *testing.T) {
	f := newLandFixture(t)
	r1 := f.sandbox("20260101000000-0001", "sed -i s/two/TWO-1/ a.txt && git commit -qam one")
	r2 := f.sandbox("20260101000000-0002", "sed -i s/two/TWO-2/ a.txt && git commit -qam two")
	r3 := f.sandbox("20260101000000-0003", "echo new > c.txt && git add c.txt && git commit -qm three")
	// Uncommitted only, in a file nobody else touches.
	r4 := f.sandbox("20260101000000-0004", "echo mine > d.txt")
	recs := []*store.InvocationRecord{r1, r2, r3, r4}

	counter := &countingRunner{}
	a, err := Open(f.ctx, f.repo, counter)
	if err != nil {
		t.Fatal(err)
	}
	fc := a.Forecasts(f.ctx, recs)
	want := map[string]Forecast{
		r1.InvocationID: {LandsCleanly: true, ConflictsWith: []string{r2.InvocationID}, ConflictFiles: []string{"a.txt"}},
		r2.InvocationID: {LandsCleanly: true, ConflictsWith: []string{r1.InvocationID}, ConflictFiles: []string{"a.txt"}},
		r3.InvocationID: {LandsCleanly: true, ConflictsWith: []string{}, ConflictFiles: []string{}},
		r4.InvocationID: {LandsCleanly: true, ConflictsWith: []string{}, ConflictFiles: []string{}},
	}
	for id, w := range want {
		if got := fc[id]; got == nil || !reflect.DeepEqual(*got, w) {
			t.Errorf("%s: forecast %+v, want %+v", id, got, w)
		}
	}

	// Nothing changed: one for-each-ref (none once the ref files are
	// old enough for RefTips to trust), nothing else.
	counter.n.Store(0)
	counter.args = nil
	again := a.Forecasts(f.ctx, recs)
	if n := counter.n.Load(); n > 1 || n == 1 && !slices.Contains(counter.args[0], "for-each-ref") {
		t.Errorf("a cached forecast ran %d git commands: %v", n, counter.args)
	}
	if !reflect.DeepEqual(again, fc) {
		t.Errorf("cached forecast differs: %+v vs %+v", again, fc)
	}

	// The integration branch moves (r1 lands): r2 now conflicts with it.
	if _, err := a.Land(f.ctx, LandOptions{Query: r1.InvocationID}); err != nil {
		t.Fatal(err)
	}
	r1, _ = a.Store.ReadInvocation(r1.InvocationID)
	fc = a.Forecasts(f.ctx, []*store.InvocationRecord{r1, r2, r3, r4})
	if got := fc[r2.InvocationID]; got == nil || got.LandsCleanly || !reflect.DeepEqual(got.ConflictsWith, []string{ConflictsIntegration}) {
		t.Errorf("after the land, r2: %+v", got)
	}
	if fc[r1.InvocationID] != nil {
		t.Errorf("a landed invocation has a forecast: %+v", fc[r1.InvocationID])
	}
	// land --check agrees.
	res, err := a.CheckLand(f.ctx, LandOptions{Query: r2.InvocationID})
	if err != nil || res.Clean || !reflect.DeepEqual(res.Conflicts, []string{"a.txt"}) {
		t.Errorf("land --check r2: %+v, %v", res, err)
	}
}

func TestQueuePlacesOldestFirst(t *testing.T) {
	q := func(id, at string) store.InvocationEntry {
		return store.InvocationEntry{ID: id, Record: &store.InvocationRecord{InvocationID: id, Status: store.StatusQueued, QueuedAt: at}}
	}
	discarded := q("d", "2026-01-01T00:00:00.000000001Z")
	discarded.Record.LandingStatus = store.Str(store.LandingDiscarded)
	list := []store.InvocationEntry{
		q("b", "2026-01-01T00:00:00.000000200Z"),
		q("a", "2026-01-01T00:00:00.000000300Z"),
		q("c", "2026-01-01T00:00:00.000000100Z"),
		discarded,
		{ID: "x", Record: &store.InvocationRecord{InvocationID: "x", Status: store.StatusRunning}},
	}
	got := QueuePlaces(list)
	want := map[string]int{"c": 1, "b": 2, "a": 3}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("QueuePlaces = %v, want %v", got, want)
	}
}

// TestForecastAfterIntegrationCommit: after a commit on the integration
// branch, exactly the sandboxes that touch what it changed say they do not
// land cleanly, with the integration as partner and the files named; the
// pairs among the others still hold; and what each sandbox would land is
// not worked out again (no status, log or diff: only merges run).
func TestForecastAfterIntegrationCommit(t *testing.T) {
	f := newLandFixture(t)
	f.sh(f.a.Store.IntegrationWorktreeTreePath(f.wt.WorktreeID), "printf 'b1\\nb2\\nb3\\n' > b.txt && git add b.txt && git commit -qm b")
	r1 := f.sandbox("20260101000000-0001", "sed -i s/two/TWO-1/ a.txt && git commit -qam one")
	// Two commits, the second on the file the integration commit changes.
	r2 := f.sandbox("20260101000000-0002", "echo x > x.txt && git add x.txt && git commit -qm x && sed -i s/b2/B2-2/ b.txt && git commit -qam b")
	// Uncommitted only, on that file too.
	r3 := f.sandbox("20260101000000-0003", "sed -i s/b2/B2-3/ b.txt")
	r4 := f.sandbox("20260101000000-0004", "sed -i s/two/TWO-4/ a.txt && git commit -qam four")
	r5 := f.sandbox("20260101000000-0005", "echo new > c.txt && git add c.txt && git commit -qm five")
	recs := []*store.InvocationRecord{r1, r2, r3, r4, r5}

	counter := &countingRunner{}
	a, err := Open(f.ctx, f.repo, counter)
	if err != nil {
		t.Fatal(err)
	}
	a.Forecasts(f.ctx, recs) // what each would land, judged once

	f.sh(f.a.Store.IntegrationWorktreeTreePath(f.wt.WorktreeID), "sed -i s/b2/B2-int/ b.txt && git commit -qam integration")
	counter.n.Store(0)
	counter.mu.Lock()
	counter.args = nil
	counter.mu.Unlock()
	fc := a.Forecasts(f.ctx, recs)
	want := map[string]Forecast{
		r1.InvocationID: {LandsCleanly: true, ConflictsWith: []string{r4.InvocationID}, ConflictFiles: []string{"a.txt"}},
		r2.InvocationID: {LandsCleanly: false, ConflictsWith: []string{ConflictsIntegration}, ConflictFiles: []string{"b.txt"}},
		r3.InvocationID: {LandsCleanly: false, ConflictsWith: []string{ConflictsIntegration}, ConflictFiles: []string{"b.txt"}},
		r4.InvocationID: {LandsCleanly: true, ConflictsWith: []string{r1.InvocationID}, ConflictFiles: []string{"a.txt"}},
		r5.InvocationID: {LandsCleanly: true, ConflictsWith: []string{}, ConflictFiles: []string{}},
	}
	for id, w := range want {
		if got := fc[id]; got == nil || !reflect.DeepEqual(*got, w) {
			t.Errorf("%s: forecast %+v, want %+v", id, got, w)
		}
	}
	for _, args := range counter.args {
		for _, verb := range []string{"status", "log", "diff", "rev-list", "read-tree", "write-tree", "rev-parse", "merge-base", "for-each-ref"} {
			if slices.Contains(args, verb) {
				t.Errorf("after an integration commit the forecast ran git %s: %v", verb, args)
			}
		}
	}
	// land --check agrees with the forecast for each.
	for id, w := range want {
		res, err := a.CheckLand(f.ctx, LandOptions{Query: id, Apply: true})
		if err != nil || res.Clean != w.LandsCleanly {
			t.Errorf("land --check --apply %s: %+v, %v (forecast says clean=%v)", id, res, err, w.LandsCleanly)
		}
	}
}

// A new integration tip made on the old one keeps what was known to be in
// the old (and the old tip itself); any other new tip (a reset, an amend)
// keeps nothing, so each ancestry is asked again.
func TestForecastMoveHead(t *testing.T) {
	f := newLandFixture(t)
	tree := f.a.Store.IntegrationWorktreeTreePath(f.wt.WorktreeID)
	rev := func(r string) string {
		out, err := exec.Command("git", "-C", tree, "rev-parse", r).Output()
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(out))
	}
	head := func() string { return rev("HEAD") }
	old := head()
	f.sh(tree, "git commit -q --allow-empty -m next")
	next := head()
	cache := &store.ForecastCache{Head: old, InHead: map[string]bool{"p-in": true, "p-out": false}}
	f.a.reader().MoveHead(cache, next)
	if want := map[string]bool{old: true, "p-in": true}; !reflect.DeepEqual(cache.InHead, want) {
		t.Errorf("child tip: InHead %v, want %v", cache.InHead, want)
	}
	if cache.HeadTree != rev("HEAD^{tree}") {
		t.Errorf("child tip: HeadTree %q", cache.HeadTree)
	}
	f.sh(tree, "git commit -q --amend --allow-empty -m amended")
	f.a.reader().MoveHead(cache, head())
	if len(cache.InHead) != 0 {
		t.Errorf("amended tip: InHead %v, want nothing known", cache.InHead)
	}
}
