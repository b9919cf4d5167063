package agency

import (
	"context"
	"os"

	"github.com/git-agency/git-agency/checkpoint"
	"github.com/git-agency/git-agency/errs"
	"github.com/git-agency/git-agency/store"
)

// RemoveWorktreeOptions are the inputs of `worktree rm`.
type RemoveWorktreeOptions struct {
	Query string
	Force bool
}

// RemoveWorktree removes an integration tree and archives its record. The
// branch is kept: it may hold the only copy of the user's commits. Without
// Force, a tree with any change (untracked files included) is refused.
func (a *App) RemoveWorktree(ctx context.Context, opts RemoveWorktreeOptions) (*RemoveWorktreeResult, error) {
	rec, err := a.ResolvePresentWorktree(opts.Query)
	if err != nil {
		return nil, err
	}

	// Running agents: refused, or with --force stopped (5s, then killed).
	// Nothing is discarded yet: that waits until the tree is gone.
	stopped, err := a.beforeWorktreeRemoveInvocations(ctx, rec, opts.Force)
	if err != nil {
		return nil, err
	}

	ctx, unlock, err := a.lockWork(ctx)
	if err != nil {
		return nil, err
	}
	defer unlock()

	// Re-read under the lock: another command may have removed it meanwhile.
	cur, err := a.Store.ReadWorktree(rec.WorktreeID)
	if err != nil {
		return nil, errs.StoreCorrupt(a.Store.IntegrationWorktreeMetaPath(rec.WorktreeID), err)
	}
	if cur.State != store.StatePresent {
		return nil, errs.Archived(cur.Name, cur.WorktreeID)
	}

	rec = cur

	// An agent started since the check above keeps the tree.
	running, err := a.activeInvocationsLocked(ctx, rec.WorktreeID)
	if err != nil {
		return nil, err
	}
	if len(running) > 0 {
		return nil, errs.HasInvocations(rec.Name, running)
	}

	if !rec.Adopted {
		// Never let an edited record point git worktree remove elsewhere.
		if err := store.CheckInside(a.Store.IntegrationWorktreeDir(rec.WorktreeID), rec.TreePath); err != nil {
			return nil, err
		}
	}

	kept, keptSubs := "", []string(nil)
	if _, err := os.Stat(rec.TreePath); err == nil {
		if opts.Force {
			// Its uncommitted changes are saved and the removal logged
			// first: `undo` checks the branch out again with them.
			if err := a.logWorktreeRemoveLocked(ctx, rec, stopped); err != nil {
				return nil, err
			}
			if err := a.fail(FPRemoveAfterLog); err != nil {
				return nil, err
			}
		}

		if !opts.Force {
			dirty, err := a.Repo.Tree(rec.TreePath).IsDirty(ctx)
			if err != nil {
				return nil, gitErr(err)
			}
			if dirty {
				return nil, a.dirtyErr(ctx, rec.TreePath, errs.DirtyWorktree(rec.Name))
			}
		}

		// Commits made on a detached HEAD would go with the tree: keep them.
		if kept, err = a.keepTreeHead(ctx, rec.TreePath, rec.WorktreeID); err != nil {
			return nil, err
		}
		if keptSubs, err = a.keepSubmoduleHeads(ctx, rec.TreePath, rec.WorktreeID); err != nil {
			return nil, err
		}

		if err := a.Repo.WorktreeRemove(ctx, rec.TreePath, opts.Force); err != nil {
			// Changed since the check above: git refused, and says why only
			// in words, so look again.
			if !opts.Force {
				if dirty, derr := a.Repo.Tree(rec.TreePath).IsDirty(ctx); derr == nil && dirty {
					return nil, a.dirtyErr(ctx, rec.TreePath, errs.DirtyWorktree(rec.Name))
				}
			}

			return nil, gitErr(err)
		}
	} else {
		// The tree vanished behind our back: drop git's stale registration
		// of it, and of nothing else.
		if err := a.pruneOurs(ctx, rec.TreePath); err != nil {
			return nil, err
		}
	}

	rec.State = store.StateArchived
	rec.ArchivedAt = a.now()
	if err := a.Store.WriteWorktree(rec); err != nil {
		return nil, err
	}

	res := &RemoveWorktreeResult{Worktree: rec, KeptRef: kept, KeptSubmodules: keptSubs}
	res.Discarded, res.Kept, err = a.afterWorktreeRemoveInvocations(ctx, rec, stopped)

	// Its queued invocations can never start now: they leave the queue,
	// and the slots its stopped agents held go to others.
	a.drainQueueLocked(ctx)
	if err != nil {
		return res, err
	}

	return res, nil
}

// activeInvocationsLocked lists the worktree's running invocations (after
// reconcile); the caller holds the lock. When the records cannot be read it
// fails rather than say there are none.
func (a *App) activeInvocationsLocked(ctx context.Context, wtID string) ([]string, error) {
	var out []string
	list, err := a.Store.ScanInvocations()
	if err != nil {
		return nil, errs.IO("scan", a.Store.InvocationsDir(), err)
	}

	for _, e := range list {
		if e.Record == nil || e.Record.IntegrationWorktreeID != wtID || !e.Record.Active() {
			continue
		}
		if r := a.reconcileLocked(ctx, e.Record); r.Active() {
			out = append(out, r.InvocationID)
		}
	}

	return out, nil
}

// UndoCreateWorktree takes back a worktree this command just created, when
// the rest of the command failed (`run` whose agent could not start): the
// tree, its registration, its branch and its record go, as if it was never
// made. It keeps everything, and says why, when the tree already holds
// work (the editor --open started was used, or a commit was made on the
// branch): nothing a user made is ever removed.
func (a *App) UndoCreateWorktree(ctx context.Context, rec *store.WorktreeRecord) (kept string, err error) {
	ctx, unlock, err := a.lockWork(ctx)
	if err != nil {
		return "", err
	}
	defer unlock()

	if err := store.CheckInside(a.Store.IntegrationWorktreeDir(rec.WorktreeID), rec.TreePath); err != nil {
		return "", err
	}
	if dirty, err := a.Repo.Tree(rec.TreePath).IsDirty(ctx); err != nil || dirty {
		return "its tree has changes", gitErr(err)
	}
	if ok, err := a.Repo.ReachableFromOtherBranch(ctx, "refs/heads/"+rec.Branch, "refs/heads/"+rec.Branch); err != nil || !ok {
		return "its branch " + rec.Branch + " has commits of its own", gitErr(err)
	}

	running, err := a.activeInvocationsLocked(ctx, rec.WorktreeID)
	if err != nil {
		return "its invocation records cannot be read", err
	}
	if len(running) > 0 {
		return "an agent runs in it", nil
	}
	if err := a.Repo.WorktreeRemove(ctx, rec.TreePath, true); err != nil {
		return "", gitErr(err)
	}
	if err := a.pruneOurs(ctx); err != nil {
		return "", err
	}
	if err := a.Repo.DeleteBranch(ctx, rec.Branch, true); err != nil {
		return "", gitErr(err)
	}

	return "", store.RemoveAllInside(a.Store.IntegrationWorktreesDir(), a.Store.IntegrationWorktreeDir(rec.WorktreeID))
}

// beforeWorktreeRemoveInvocations is `worktree rm`'s check: it refuses
// while the worktree has running invocations; with force it stops them (5 s
// grace, then kill) and returns their ids. Their sandboxes are discarded
// only once the integration tree is gone (afterWorktreeRemoveInvocations);
// finished sandboxes that were never landed are kept: --force is about the
// integration tree's own changes, not about other work.
func (a *App) beforeWorktreeRemoveInvocations(ctx context.Context, wt *store.WorktreeRecord, force bool) ([]string, error) {
	list, err := a.Store.ScanInvocations()
	if err != nil {
		return nil, errs.IO("scan", a.Store.InvocationsDir(), err)
	}

	var running []*store.InvocationRecord
	var ids []string
	for _, e := range list {
		if e.Record == nil || e.Record.IntegrationWorktreeID != wt.WorktreeID {
			continue
		}
		if rec := a.Reconcile(ctx, e.Record); rec.Active() {
			running = append(running, rec)
			ids = append(ids, rec.InvocationID)
		}
	}

	if len(running) > 0 && !force {
		return nil, errs.HasInvocations(wt.Name, ids)
	}

	for _, rec := range running {
		if _, err := a.stopAndWait(ctx, rec, StopGrace); err != nil {
			return nil, err
		}
	}

	return ids, nil
}

// afterWorktreeRemoveInvocations discards the stopped agents' sandboxes and
// lists the worktree's other pending ones, which are kept.
func (a *App) afterWorktreeRemoveInvocations(ctx context.Context, wt *store.WorktreeRecord, stopped []string) ([]string, []string, error) {
	var discarded, kept []string
	isStopped := map[string]bool{}
	for _, id := range stopped {
		isStopped[id] = true
		if _, err := a.discardLocked(ctx, id, &DiscardResult{Stopped: true}); err != nil && !errs.Is(err, errs.EAlreadyLanded) {
			return discarded, kept, err
		}
		discarded = append(discarded, id)
	}

	list, err := a.Store.ScanInvocations()
	if err != nil {
		// The tree is gone already: say the list of kept sandboxes is
		// unknown rather than fail a removal that happened.
		a.warn("", errs.IO("scan", a.Store.InvocationsDir(), err))
	}

	for _, e := range list {
		r := e.Record
		if r == nil || r.IntegrationWorktreeID != wt.WorktreeID || isStopped[r.InvocationID] {
			continue
		}

		if store.Deref(r.LandingStatus) == store.LandingPending {
			if _, err := os.Stat(a.Store.SandboxTreePath(r.InvocationID)); err == nil {
				kept = append(kept, r.InvocationID)
			}
		}
	}

	return discarded, kept, nil
}

// logWorktreeRemoveLocked saves an integration tree's uncommitted work
// (untracked files too; denylisted ones and nested repositories left out,
// and named) as a commit under refs/agency/undo/<seq>, and logs the
// `worktree rm --force` that is about to remove the tree.
func (a *App) logWorktreeRemoveLocked(ctx context.Context, rec *store.WorktreeRecord, stopped []string) error {
	lines, err := a.Store.ReadOplog()
	if err != nil {
		return err
	}

	op := store.Operation{Seq: store.NextSeq(lines), Op: store.OpWorktreeRemove, WorktreeID: rec.WorktreeID,
		WorktreeName: rec.Name, Branch: rec.Branch, TreePath: rec.TreePath, Stopped: stopped}
	deny := checkpoint.DenylistFromConfig(a.Config)
	snap, err := checkpoint.SnapshotTree(ctx, a.Repo, rec.TreePath, true, deny)
	if err == nil && len(snap.Denied) > 0 {
		denied := snap.Denied
		snap, err = checkpoint.SnapshotTree(ctx, a.Repo, rec.TreePath, true, deny, denied...)
		if snap != nil {
			snap.Denied = denied
		}
	}

	if err != nil {
		return gitErr(err)
	}

	r := &store.Restore{Branch: rec.Branch, Head: snap.Head, NotKept: append(snap.Denied, snap.Nested...)}
	if snap.Tree != snap.HeadTree {
		commit, err := a.Repo.CommitTree(ctx, snap.Tree, snap.Head, "agency: worktree rm --force "+rec.Name)
		if err != nil {
			return gitErr(err)
		}

		r.Commit, r.Ref = commit, store.UndoRef(op.Seq)
		if err := a.Repo.UpdateRef(ctx, r.Ref, commit); err != nil {
			return gitErr(err)
		}
	}

	op.Restore = r
	_, err = a.Store.AppendOperation(op)
	return err
}

// RemoveWorktreeResult is what `worktree rm` did.
type RemoveWorktreeResult struct {
	Worktree *store.WorktreeRecord
	// KeptRef holds the tree's HEAD when no branch had its commits
	// (refs/agency/kept/<worktree-id>/HEAD), "" when none.
	KeptRef string
	// KeptSubmodules hold commits made inside the tree's submodules that
	// only the tree had (refs/agency/kept/<worktree-id>/submodule/<path>).
	KeptSubmodules []string
	// Discarded: the agents rm --force stopped, whose sandboxes went with
	// the worktree.
	Discarded []string
	// Kept: finished sandboxes that were never landed or discarded; they
	// stay (with their branches and checkpoints) until discarded.
	Kept []string
}
