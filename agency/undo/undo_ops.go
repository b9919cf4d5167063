package undo

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/git-agency/git-agency/agency/internal/core"
	"github.com/git-agency/git-agency/checkpoint"
	"github.com/git-agency/git-agency/errs"
	"github.com/git-agency/git-agency/gitcore"
	"github.com/git-agency/git-agency/store"
)

// land reverses a land: the integration branch goes back to where it was
// (compare-and-swap, with a reflog message) when it still points at what
// the land made and its tree is clean; the sandbox tree is recreated from
// its branch and its saved state; the invocation is pending again.
func (u *undoRun) land(ctx context.Context) error {
	a, e := u.a, u.entry
	rec, err := u.invocation()
	if err != nil {
		return err
	}
	if s := store.Deref(rec.LandingStatus); s != store.LandingLanded && !(u.resume() && s == store.LandingPending) {
		return errs.UndoStatusChanged(rec.InvocationID, store.LandingLanded, s)
	}
	if rec.Active() {
		return errs.InvocationRunning(rec.InvocationID, "undo the land of")
	}

	wt, err := a.Host.WorktreeByID(e.WorktreeID)
	if err != nil {
		return err
	}
	if wt.State != store.StatePresent {
		return errs.UndoNeedsTree(u.what(), wt.Name, wt.Branch, core.ShortSHA(e.Before), core.ShortSHA(e.After))
	}
	if err := a.Host.CheckOnBranch(ctx, wt); err != nil {
		return err
	}

	integ := a.Repo.Tree(wt.TreePath)
	head, err := integ.Head(ctx)
	if err != nil {
		return core.GitErr(err)
	}

	// move: the branch goes back, then index and files follow it; files:
	// only index and files (an undo killed between the two).
	move, files := false, false
	switch {
	case head == e.After:
		move, files = true, true
		dirty, err := integ.HasTrackedChanges(ctx)
		if err != nil {
			return core.GitErr(err)
		}
		if dirty {
			return a.Host.DirtyErr(ctx, wt.TreePath, errs.UndoDirtyIntegration(wt.Name, wt.TreePath))
		}
	case head == e.Before:
		if u.resume() {
			if ok, err := integ.IndexMatches(ctx, e.After); err == nil && ok && e.After != e.Before {
				files = true
			}
		} else {
			u.note("the integration branch %s is at %s already; left alone", wt.Branch, core.ShortSHA(head))
		}
	default:
		if ok, err := a.Repo.IsAncestor(ctx, e.After, head); err != nil {
			return core.GitErr(err)
		} else if ok {
			return errs.UndoLandMoved(rec.InvocationID, wt.Branch, core.ShortSHA(e.Before), core.ShortSHA(e.After))
		}
		if !u.resume() {
			return errs.UndoLandGone(rec.InvocationID, wt.Branch)
		}
	}

	r := e.Restore
	if err := u.checkSandboxRestore(ctx, r); err != nil {
		return err
	}

	if err := u.begin(); err != nil {
		return err
	}

	// The branch first, by compare-and-swap: when someone committed since
	// the check above, it fails and nothing was touched.
	if move {
		if err := integ.MoveHead(ctx, e.After, e.Before, "agency: undo land invocation "+rec.InvocationID); err != nil {
			u.abort()
			if now, herr := integ.Head(ctx); herr == nil && now != e.After {
				return errs.UndoLandMoved(rec.InvocationID, wt.Branch, core.ShortSHA(e.Before), core.ShortSHA(e.After))
			}
			return core.GitErr(err)
		}

		if err := a.Fail(FPUndoAfterRef); err != nil {
			return err
		}
	}

	if files {
		if err := integ.SwitchFiles(ctx, e.After, e.Before); err != nil {
			// Put the branch back: the undo leaves nothing changed.
			if move && integ.MoveHead(ctx, e.Before, e.After, "agency: undo of the land of "+rec.InvocationID+" failed; branch put back") == nil {
				u.abort()
			}

			if blocked := (*gitcore.BlockedError)(nil); errors.As(err, &blocked) {
				return errs.UndoDirtyIntegration(wt.Name, wt.TreePath).With(blocked.Paths...)
			}

			return core.GitErr(err)
		}
	}

	if err := a.Fail(FPUndoAfterBranch); err != nil {
		return err
	}
	if err := u.restoreSandbox(ctx, rec, r); err != nil {
		return err
	}
	if _, err := a.Store.UpdateInvocationLocked(rec.InvocationID, func(r *store.InvocationRecord) error {
		r.LandingStatus = store.Str(store.LandingPending)
		r.LandedAt = nil
		r.Land = nil
		return nil
	}); err != nil {
		return err
	}

	a.Event(rec.InvocationID, "land_undone", map[string]any{"undo": u.res.Seq, "operation": e.Seq,
		"before": e.Before, "after": e.After, "moved": move})
	return a.Fail(FPUndoAfterRecord)
}

// discard reverses a discard: the sandbox is recreated at the checkpoint
// the discard took, and the invocation's landing status is what it was.
func (u *undoRun) discard(ctx context.Context) error {
	a, e := u.a, u.entry
	rec, err := u.invocation()
	if err != nil {
		return err
	}

	// "" is a queued invocation's: back in the queue.
	was := e.LandingStatus
	s := store.Deref(rec.LandingStatus)
	if s != store.LandingDiscarded && s != was {
		return errs.UndoStatusChanged(rec.InvocationID, store.LandingDiscarded, s)
	}

	if s == was && !u.resume() {
		// The discard failed (or was killed) after it logged itself and
		// before it marked the record: with the tree still there, there
		// is nothing to undo; without it, it is recreated.
		if _, err := os.Stat(a.Store.SandboxTreePath(rec.InvocationID)); err == nil {
			u.note("the discard of %s never finished: its sandbox is still there; nothing to undo", rec.InvocationID)
			return nil
		}
	}

	r := e.Restore
	if err := u.checkSandboxRestore(ctx, r); err != nil {
		return err
	}
	if err := u.begin(); err != nil {
		return err
	}
	if err := u.restoreSandbox(ctx, rec, r); err != nil {
		return err
	}
	if _, err := a.Store.UpdateInvocationLocked(rec.InvocationID, func(r *store.InvocationRecord) error {
		r.LandingStatus = nil
		if was != "" {
			r.LandingStatus = store.Str(was)
		}
		r.DiscardedAt = nil
		return nil
	}); err != nil {
		return err
	}

	a.Event(rec.InvocationID, "discard_undone", map[string]any{"undo": u.res.Seq, "operation": e.Seq})
	return a.Fail(FPUndoAfterRecord)
}

// checkpointApply reverses a `checkpoint apply`: the sandbox goes back to
// its before-apply checkpoint, if it still holds what the apply left.
func (u *undoRun) checkpointApply(ctx context.Context) error {
	a, e := u.a, u.entry
	rec, err := u.invocation()
	if err != nil {
		return err
	}

	rec = a.Host.ReconcileLocked(ctx, rec)
	if rec.Active() {
		return errs.CheckpointApplyRunning(rec.InvocationID)
	}
	if err := a.Host.SandboxPresent(rec); err != nil {
		return err
	}

	r := e.Restore
	if r == nil {
		return errs.UndoExpired(u.what(), "the saved state (an entry without one)")
	}

	tree := a.Store.SandboxTreePath(rec.InvocationID)
	if head, err := a.Repo.Tree(tree).Head(ctx); err != nil {
		return core.GitErr(err)
	} else if head != r.Head {
		return errs.UndoBranchMoved(u.what(), "HEAD of the sandbox", r.Head, head)
	}

	if err := u.checkSnapshot(ctx, r); err != nil {
		return err
	}

	if !u.resume() {
		// The sandbox must hold exactly what the apply left there.
		snap, err := a.Host.SnapshotSandbox(ctx, tree, nil)
		if err != nil {
			return err
		}

		want, err := a.Repo.TreeOf(ctx, e.AppliedCommit)
		if err != nil {
			return errs.UndoExpired(u.what(), "checkpoint "+fmt.Sprint(e.Applied))
		}

		if len(snap.Denied) == 0 && snap.Tree != want {
			// The apply failed (or was killed) after it logged itself and
			// before it changed the files: nothing to undo.
			before := snap.HeadTree
			if r.Commit != "" {
				before, _ = a.Repo.TreeOf(ctx, r.Commit)
			}

			if snap.Tree == before {
				u.note("the checkpoint apply never finished: the sandbox of %s is as it was before; nothing to undo", rec.InvocationID)
				return nil
			}
		}

		if len(snap.Denied) > 0 || snap.Tree != want {
			return errs.UndoSandboxChanged(rec.InvocationID)
		}
	}

	if err := u.begin(); err != nil {
		return err
	}

	cl, err := a.Store.LockCheckpoints(rec.InvocationID, checkpoint.LockTimeout)
	if err != nil {
		return err
	}
	defer cl.Unlock()

	// Untracked files checkpoints leave out are in neither checkpoint: they
	// stay where they are, as the apply left them.
	st, err := a.Repo.Tree(tree).Status(ctx)
	if err != nil {
		return core.GitErr(err)
	}
	if err := a.ResetFiles(ctx, tree, r.Commit, checkpoint.LeftOutPatterns(a.Host.CheckpointOptions(rec, ""), st)); err != nil {
		return err
	}
	if err := a.Fail(FPUndoAfterTree); err != nil {
		return err
	}

	a.Event(rec.InvocationID, "checkpoint_apply_undone", map[string]any{"undo": u.res.Seq, "operation": e.Seq,
		"restored_checkpoint": r.Checkpoint})
	return nil
}

// worktreeRemove reverses a `worktree rm --force`: the integration tree is
// checked out again from its kept branch, with the uncommitted changes rm
// saved, and its record is present again. (The agents rm stopped have
// their own discard operations, newer: they are undone first, one each.)
func (u *undoRun) worktreeRemove(ctx context.Context) error {
	a, e := u.a, u.entry
	wt, err := a.Host.WorktreeByID(e.WorktreeID)
	if err != nil {
		if errs.Is(err, errs.ENotFound) {
			return errs.UndoExpired(u.what(), "the record of worktree "+e.WorktreeID)
		}
		return err
	}

	if wt.State != store.StateArchived && !u.resume() {
		if _, err := os.Stat(wt.TreePath); err == nil {
			// rm failed (or was killed) after it logged itself and before
			// it removed the tree: nothing to undo. (Without the tree, it
			// died before archiving the record: the tree is recreated.)
			u.note("worktree rm --force %s never finished: its tree is still there; nothing to undo", wt.Name)
			return nil
		}
	}

	if !wt.Adopted {
		if err := store.CheckInside(a.Store.IntegrationWorktreeDir(wt.WorktreeID), wt.TreePath); err != nil {
			return err
		}
	}

	list, err := a.Store.ScanWorktrees()
	if err != nil {
		return errs.IO("scan", a.Store.IntegrationWorktreesDir(), err)
	}

	for _, o := range list {
		if o.Record != nil && o.ID != wt.WorktreeID && o.Record.State == store.StatePresent && o.Record.Name == wt.Name {
			return errs.NameTaken(wt.Name, o.ID)
		}
	}

	r := e.Restore
	if err := u.checkRestore(ctx, r, wt.TreePath); err != nil {
		return err
	}
	if _, err := os.Stat(wt.TreePath); err == nil && !u.resume() {
		return errs.UndoTreeExists(u.what(), wt.TreePath)
	}
	if err := u.begin(); err != nil {
		return err
	}

	remove := func() error {
		if err := a.Repo.WorktreeRemove(ctx, wt.TreePath, true); err != nil && !wt.Adopted {
			return store.RemoveAllInside(a.Store.IntegrationWorktreeDir(wt.WorktreeID), wt.TreePath)
		}
		return nil
	}
	if err := u.recreateTree(ctx, wt.TreePath, r, remove, nil); err != nil {
		return err
	}
	if err := a.Host.WriteMarker(wt.TreePath); err != nil {
		return err
	}

	if len(r.NotKept) > 0 {
		u.note("not restored (denylisted or nested repositories, never saved): %v", r.NotKept)
	}

	if err := a.Fail(FPUndoAfterTree); err != nil {
		return err
	}

	wt.State, wt.ArchivedAt = store.StatePresent, ""
	if err := a.Store.WriteWorktree(wt); err != nil {
		return err
	}

	return a.Fail(FPUndoAfterRecord)
}
