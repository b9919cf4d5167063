package gitcore

import (
	"context"
	"path/filepath"
	"testing"
)

// HeadFromFiles is Head for a branch (loose or packed), a detached HEAD
// and a linked worktree, and "" (ask git) for an unborn branch.
func TestHeadFromFiles(t *testing.T) {
	ctx := context.Background()
	r, git := testRepo(t)
	dir := r.Toplevel
	same := func(what string, tree *Tree) {
		t.Helper()
		want, err := tree.Head(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if got := tree.HeadFromFiles(); got != want || got == "" {
			t.Errorf("%s: HeadFromFiles %q, Head %q", what, got, want)
		}
	}
	same("loose branch", r.Tree(dir))
	git("pack-refs", "--all")
	same("packed branch", r.Tree(dir))
	git("commit", "-q", "--allow-empty", "-m", "next")
	same("packed, then moved", r.Tree(dir))
	git("checkout", "-q", "--detach")
	same("detached", r.Tree(dir))
	wt := filepath.Join(t.TempDir(), "wt")
	git("worktree", "add", "-q", "-b", "side", wt)
	same("linked worktree", r.Tree(wt))
	git("checkout", "-q", "--orphan", "unborn")
	if got := r.Tree(dir).HeadFromFiles(); got != "" {
		t.Errorf("unborn branch: HeadFromFiles %q, want \"\"", got)
	}
}
