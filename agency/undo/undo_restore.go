package undo

import (
	"context"
	"errors"
	"os"
	"path/filepath"

	"github.com/git-agency/git-agency/agency/internal/core"
	"github.com/git-agency/git-agency/checkpoint"
	"github.com/git-agency/git-agency/errs"
	"github.com/git-agency/git-agency/gitcore"
	"github.com/git-agency/git-agency/store"
)

// checkRestore refuses a restore at path whose branch or snapshot is gone,
// whose branch moved since, or is checked out in another tree.
func (u *undoRun) checkRestore(ctx context.Context, r *store.Restore, path string) error {
	if r == nil {
		return errs.UndoExpired(u.what(), "the saved state (an entry without one)")
	}

	tip, err := u.a.Repo.RevParse(ctx, "refs/heads/"+r.Branch)
	if err != nil || r.Head == "" {
		return errs.UndoExpired(u.what(), "branch "+r.Branch)
	}
	if tip != r.Head {
		return errs.UndoBranchMoved(u.what(), r.Branch, r.Head, tip)
	}

	wts, err := u.a.Repo.Worktrees(ctx)
	if err != nil {
		return core.GitErr(err)
	}

	for _, w := range wts {
		if w.Branch == "refs/heads/"+r.Branch && !w.Prunable && filepath.Clean(w.Path) != filepath.Clean(path) {
			return errs.UndoBranchCheckedOut(u.what(), r.Branch, w.Path)
		}
	}

	return u.checkSnapshot(ctx, r)
}

// checkSnapshot refuses a restore whose snapshot gc removed: its ref (an
// object without one is git gc's to prune at any time) or its commit.
func (u *undoRun) checkSnapshot(ctx context.Context, r *store.Restore) error {
	if r.Commit == "" {
		return nil
	}

	missing := "snapshot " + core.ShortSHA(r.Commit)
	if r.Ref != "" {
		missing = r.Ref
		if got, err := u.a.Repo.RevParse(ctx, r.Ref); err != nil || got != r.Commit {
			return errs.UndoExpired(u.what(), missing)
		}
	}

	if _, err := u.a.Repo.RevParse(ctx, r.Commit); err != nil {
		return errs.UndoExpired(u.what(), missing)
	}

	return nil
}

// checkSandboxRestore refuses a sandbox restore that checkRestore refuses,
// or whose tree exists again (unless an interrupted undo made it).
func (u *undoRun) checkSandboxRestore(ctx context.Context, r *store.Restore) error {
	tree := u.a.Store.SandboxTreePath(u.entry.InvocationID)
	if err := u.checkRestore(ctx, r, tree); err != nil {
		return err
	}
	if _, err := os.Stat(tree); err == nil && !u.resume() {
		return errs.UndoTreeExists(u.what(), tree)
	}

	return nil
}

// recreateTree checks out r.Branch at path again (a tree an interrupted
// undo left half made is removed first: the undo made it from r) and puts
// the snapshot's files back, untracked ones untracked again. A non-nil
// sparse says the tree's sparse checkout, set before any file is written
// (not enabled: a full tree, whatever git copies from the main tree); nil
// leaves it to git.
func (u *undoRun) recreateTree(ctx context.Context, path string, r *store.Restore, remove func() error, sparse *gitcore.Sparse) error {
	a := u.a

	if _, err := os.Stat(path); err == nil {
		if err := remove(); err != nil {
			return err
		}
	}

	if err := a.PruneOurs(ctx, path); err != nil {
		return err
	}

	if sparse == nil {
		if err := a.Repo.WorktreeAddExisting(ctx, path, r.Branch); err != nil {
			return core.GitErr(err)
		}
	} else if err := a.checkoutSparse(ctx, path, r.Branch, *sparse); err != nil {
		return err
	}

	if r.Commit == "" {
		return nil
	}

	return a.ResetFiles(ctx, path, r.Commit, nil) // a new checkout: nothing untracked yet
}

// restoreSandbox is what an undo of a land or a discard makes of the
// sandbox: its tree again (recreateSandbox), or for an agent that ran on
// a host nothing: its sandbox was there, here it has only its fetched
// branch, which lands. A tree checked out here would hold that branch,
// and the host's fetches into it would be refused.
func (u *undoRun) restoreSandbox(ctx context.Context, rec *store.InvocationRecord, r *store.Restore) error {
	if rec.Host == "" {
		return u.recreateSandbox(ctx, rec, r)
	}
	u.res.Host = rec.Host
	return u.a.Store.FinishedRecordsChanged()
}

// recreateSandbox makes an invocation's sandbox tree again from r (then
// the failpoint after the tree).
func (u *undoRun) recreateSandbox(ctx context.Context, rec *store.InvocationRecord, r *store.Restore) error {
	a := u.a
	inv := rec.InvocationID
	tree := a.Store.SandboxTreePath(inv)
	if err := store.CheckInside(a.Store.SandboxesDir(), tree); err != nil {
		return err
	}
	if err := os.MkdirAll(a.Store.SandboxLogsDir(inv), 0o700); err != nil {
		return errs.IO("create", a.Store.SandboxLogsDir(inv), err)
	}

	// A sandbox made sparse (not --full) gets the integration tree's
	// patterns again, as a new sandbox would.
	sparse := &gitcore.Sparse{}
	if rec.Sparse {
		if wt, err := a.Store.ReadWorktree(rec.IntegrationWorktreeID); err == nil && wt.State == store.StatePresent {
			sp, err := a.Repo.Tree(wt.TreePath).SparseCheckout(ctx)
			if err != nil {
				return core.GitErr(err)
			}
			sparse = &sp
		}
	}

	if err := u.recreateTree(ctx, tree, r, func() error { return a.Host.RemoveSandboxTree(ctx, rec) }, sparse); err != nil {
		return err
	}

	// Reads may hold the record as finished with its tree gone.
	if err := a.Store.FinishedRecordsChanged(); err != nil {
		return err
	}
	if err := a.Host.WriteAgencyIgnore(tree); err != nil {
		return err
	}
	if state := filepath.Join(tree, store.AgencyDir, "state"); os.MkdirAll(state, 0o755) != nil {
		return errs.IO("create", state, os.ErrPermission)
	}

	if len(r.NotKept) > 0 {
		u.note("not restored (denylisted, never saved): %v", r.NotKept)
	}

	// The ignored files .worktreeinclude lists went with the tree: copy
	// them again, as into a new sandbox (a failure is only said).
	if wt, err := a.Store.ReadWorktree(rec.IntegrationWorktreeID); err == nil && wt.State == store.StatePresent {
		if err := a.Host.IncludeIntoSandbox(ctx, wt, inv); err != nil {
			u.note("the files %s lists were not copied again: %s", core.IncludeFile, errs.As(err).Msg)
		}
	}

	return a.Fail(FPUndoAfterTree)
}

// SaveSandbox saves a sandbox's state before land or discard removes its
// tree: a checkpoint of its uncommitted work, untracked files included
// (denylisted ones left out, and named). It returns what undo restores.
func (a *Undoer) SaveSandbox(ctx context.Context, rec *store.InvocationRecord, reason string) (*store.Restore, error) {
	r := &store.Restore{Branch: rec.SandboxBranch}
	if tip, err := a.Repo.RevParse(ctx, "refs/heads/"+rec.SandboxBranch); err == nil {
		r.Head = tip
	}

	tree := a.SandboxTree(rec)
	if tree == "" {
		return r, nil
	}

	o := a.Host.CheckpointOptions(rec, reason)
	o.SandboxPath = tree
	o.IncludeUntracked = true
	cp, err := checkpoint.Take(ctx, o)
	var e *errs.Error
	if errors.As(err, &e) && e.Code == errs.EDenylisted {
		r.NotKept = e.Detail
		o.Exclude = e.Detail
		cp, err = checkpoint.Take(ctx, o)
	}

	if err != nil {
		return nil, err
	}

	n := 0
	if cp != nil {
		n = cp.ID
	} else if n, err = checkpoint.Latest(ctx, a.Repo, rec.InvocationID); err != nil {
		return nil, core.GitErr(err)
	}

	if n > 0 {
		// Unchanged since checkpoint n: it holds the state.
		r.Checkpoint, r.Ref = n, store.SnapshotRef(rec.InvocationID, n)
		if r.Commit, err = a.Repo.RevParse(ctx, r.Ref); err != nil {
			return nil, core.GitErr(err)
		}
	}

	return r, nil
}
