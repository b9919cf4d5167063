package agency

import (
	"context"
	"testing"
)

// A tmux session gc planned to kill that ended meanwhile (its server with
// it: the headed agent of a killed start finished) is gone already: gc
// does not fail on it.
func TestGCSessionGoneMeanwhile(t *testing.T) {
	repo := newRepo(t)
	t.Setenv("TMUX_TMPDIR", t.TempDir()) // no server there
	ctx := context.Background()
	a, err := Open(ctx, repo, nil)
	if err != nil {
		t.Fatal(err)
	}
	plan := &GCResult{Items: []GCItem{{Kind: GCTmuxSession, Target: "agency-20260101000000-beef"}}}
	res := a.GC(ctx, plan, nil)
	if it := res.Items[0]; it.Error != "" || !it.Removed {
		t.Fatalf("gc of a session that is gone: %+v", it)
	}
}
