package agency

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/git-agency/git-agency/agency/undo"
	"github.com/git-agency/git-agency/errs"
	"github.com/git-agency/git-agency/store"
)

// A commit in the integration tree between undo's checks and its
// compare-and-swap: the undo is refused, and nothing is changed — branch,
// files, sandbox, record — and the log does not hold it as interrupted.
func TestUndoLandLosesTheRace(t *testing.T) {
	f := newLandFixture(t)
	f.sandbox(inv1, "echo x > x.txt && git add x.txt && git commit -qm x && echo u > u.txt")
	if _, err := f.a.Land(f.ctx, LandOptions{Query: inv1, Apply: true}); err != nil {
		t.Fatal(err)
	}
	f.a.Failpoint = func(step string) error {
		if step == undo.FPUndoAfterStart {
			f.sh(f.wt.TreePath, "git commit -q --allow-empty -m concurrent")
		}
		return nil
	}
	_, err := f.a.Undo(f.ctx)
	if !errs.Is(err, errs.EChangedSince) {
		t.Fatalf("undo = %v, want E_CHANGED_SINCE", err)
	}
	if s := gitOut(t, f.wt.TreePath, "log", "-1", "--format=%s"); s != "concurrent\n" {
		t.Errorf("integration HEAD = %q", s)
	}
	if st := gitOut(t, f.wt.TreePath, "status", "--porcelain"); st != "" {
		t.Errorf("integration tree changed:\n%s", st)
	}
	if _, err := os.Stat(filepath.Join(f.wt.TreePath, "u.txt")); err != nil {
		t.Errorf("landed file gone: %v", err)
	}
	if _, err := os.Stat(f.a.Store.SandboxTreePath(inv1)); !os.IsNotExist(err) {
		t.Error("sandbox recreated")
	}
	rec, _ := f.a.Store.ReadInvocation(inv1)
	if store.Deref(rec.LandingStatus) != store.LandingLanded {
		t.Errorf("landing_status = %s", store.Deref(rec.LandingStatus))
	}
	log, err := f.a.Oplog()
	if err != nil || log.Interrupted != nil || log.Next() == nil || log.Next().Op != store.OpLand {
		t.Fatalf("log after a lost race: %+v %v", log, err)
	}
	// The next undo looks afresh: the branch moved, so it says how to revert.
	f.a.Failpoint = nil
	if _, err := f.a.Undo(f.ctx); !errs.Is(err, errs.EChangedSince) {
		t.Fatalf("second undo = %v", err)
	}
}

// Files in the way of going back (an untracked file where the land deleted
// one): refused, the branch put back, nothing changed.
func TestUndoLandBlockedPutsTheBranchBack(t *testing.T) {
	f := newLandFixture(t)
	f.sandbox(inv1, "git rm -q a.txt && git commit -qm rm")
	if _, err := f.a.Land(f.ctx, LandOptions{Query: inv1}); err != nil {
		t.Fatal(err)
	}
	head := gitOut(t, f.wt.TreePath, "rev-parse", "HEAD")
	os.WriteFile(filepath.Join(f.wt.TreePath, "a.txt"), []byte("mine\n"), 0o644)
	_, err := f.a.Undo(f.ctx)
	if !errs.Is(err, errs.EDirtyWorktree) {
		t.Fatalf("undo = %v, want E_DIRTY_WORKTREE", err)
	}
	if got := gitOut(t, f.wt.TreePath, "rev-parse", "HEAD"); got != head {
		t.Errorf("HEAD %s, want %s", got, head)
	}
	if b, _ := os.ReadFile(filepath.Join(f.wt.TreePath, "a.txt")); string(b) != "mine\n" {
		t.Errorf("a.txt = %q", b)
	}
	if log, _ := f.a.Oplog(); log.Interrupted != nil {
		t.Errorf("undo left interrupted: %+v", log.Interrupted)
	}
	os.Remove(filepath.Join(f.wt.TreePath, "a.txt"))
	if _, err := f.a.Undo(f.ctx); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(f.wt.TreePath, "a.txt")); string(b) != "one\ntwo\nthree\n" {
		t.Errorf("a.txt after undo = %q", b)
	}
	// A land of commits only took no checkpoint: the sandbox comes back
	// clean, at its branch.
	sb := f.a.Store.SandboxTreePath(inv1)
	if st := gitOut(t, sb, "status", "--porcelain"); st != "" {
		t.Errorf("sandbox not clean:\n%s", st)
	}
	if got, want := gitOut(t, sb, "rev-parse", "HEAD"), gitOut(t, f.repo, "rev-parse", store.SandboxBranch(inv1)); got != want {
		t.Errorf("sandbox HEAD %s, want %s", got, want)
	}
	if cps, _ := f.a.Store.ReadCheckpoints(inv1); len(cps.Checkpoints) != 0 {
		t.Errorf("checkpoints taken: %+v", cps.Checkpoints)
	}
}

// The land's worktree was removed (plainly: nothing logged) since: refused
// with E_ARCHIVED, the kept branch left where the land put it.
func TestUndoLandOfARemovedWorktree(t *testing.T) {
	f := newLandFixture(t)
	f.sandbox(inv1, "echo x > x.txt && git add x.txt && git commit -qm x")
	res, err := f.a.Land(f.ctx, LandOptions{Query: inv1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.a.RemoveWorktree(f.ctx, RemoveWorktreeOptions{Query: "feat"}); err != nil {
		t.Fatal(err)
	}
	_, err = f.a.Undo(f.ctx)
	if !errs.Is(err, errs.EArchived) {
		t.Fatalf("undo = %v, want E_ARCHIVED", err)
	}
	if got := gitOut(t, f.repo, "rev-parse", f.wt.Branch); got != res.ResultHead+"\n" {
		t.Errorf("branch %s moved to %s", f.wt.Branch, got)
	}
	if _, err := os.Stat(f.a.Store.SandboxTreePath(inv1)); !os.IsNotExist(err) {
		t.Error("sandbox recreated")
	}
}
