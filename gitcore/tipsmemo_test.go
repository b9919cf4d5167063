package gitcore

import (
	"context"
	"reflect"
	"sync/atomic"
	"testing"
	"time"
)

// countRunner counts the git commands it runs.
type countRunner struct{ n atomic.Int64 }

func (c *countRunner) Run(ctx context.Context, cmd Cmd) (Result, error) {
	c.n.Add(1)
	return ExecRunner{}.Run(ctx, cmd)
}

// RefTips answers again without git while the ref files are unchanged,
// and runs git again whenever a ref moved, appeared, was packed or was
// deleted.
func TestRefTipsMemo(t *testing.T) {
	ctx := context.Background()
	r, git := testRepo(t)
	counter := &countRunner{}
	r.runner = counter
	// Every ref file is old enough to be kept (the racy case is below).
	r.tips.now = func() time.Time { return time.Now().Add(time.Hour) }
	base := git("rev-parse", "HEAD")
	git("commit", "-q", "--allow-empty", "-m", "second")
	second := git("rev-parse", "HEAD")
	git("branch", "a", base)
	git("branch", "b", base)
	refs := []string{"refs/heads/a", "refs/heads/b", "refs/heads/c"}
	check := func(what string, wantRuns int64, want map[string]string) {
		t.Helper()
		counter.n.Store(0)
		got, err := r.RefTips(ctx, refs...)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: tips %v, want %v", what, got, want)
		}
		if n := counter.n.Load(); n != wantRuns {
			t.Errorf("%s: %d git commands, want %d", what, n, wantRuns)
		}
		got["refs/heads/a"] = "changed by a caller"
	}
	check("first", 1, map[string]string{"refs/heads/a": base, "refs/heads/b": base})
	check("unchanged", 0, map[string]string{"refs/heads/a": base, "refs/heads/b": base})
	git("branch", "-f", "a", second)
	check("a moved", 1, map[string]string{"refs/heads/a": second, "refs/heads/b": base})
	check("unchanged again", 0, map[string]string{"refs/heads/a": second, "refs/heads/b": base})
	git("branch", "c", second)
	check("c appeared", 1, map[string]string{"refs/heads/a": second, "refs/heads/b": base, "refs/heads/c": second})
	git("pack-refs", "--all")
	check("packed", 1, map[string]string{"refs/heads/a": second, "refs/heads/b": base, "refs/heads/c": second})
	check("packed, unchanged", 0, map[string]string{"refs/heads/a": second, "refs/heads/b": base, "refs/heads/c": second})
	git("update-ref", "refs/heads/b", second)
	check("packed b moved", 1, map[string]string{"refs/heads/a": second, "refs/heads/b": second, "refs/heads/c": second})
	git("pack-refs", "--all")
	git("branch", "-D", "c")
	check("packed c deleted", 1, map[string]string{"refs/heads/a": second, "refs/heads/b": second})

	// Other refs than branches, and symbolic refs, are never kept.
	git("symbolic-ref", "refs/heads/s", "refs/heads/a")
	refs = []string{"refs/heads/a", "refs/heads/s"}
	check("symbolic", 1, map[string]string{"refs/heads/a": second, "refs/heads/s": second})
	check("symbolic again", 1, map[string]string{"refs/heads/a": second, "refs/heads/s": second})
	refs = []string{"refs/heads/a", "HEAD"}
	check("HEAD", 1, map[string]string{"refs/heads/a": second})
	check("HEAD again", 1, map[string]string{"refs/heads/a": second})
}

// Ref files modified within the racy window are looked at by git every
// time: a second write within the timestamp granularity is never missed.
func TestRefTipsMemoRacy(t *testing.T) {
	ctx := context.Background()
	r, git := testRepo(t)
	counter := &countRunner{}
	r.runner = counter
	now := time.Now()
	r.tips.now = func() time.Time { return now }
	git("branch", "a")
	for i := 0; i < 2; i++ {
		if _, err := r.RefTips(ctx, "refs/heads/a"); err != nil {
			t.Fatal(err)
		}
	}
	if n := counter.n.Load(); n != 2 {
		t.Errorf("%d git commands for a fresh ref file, want 2", n)
	}
}
