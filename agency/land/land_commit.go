package land

import (
	"context"
	"fmt"

	"github.com/git-agency/git-agency/agency/internal/core"
	"github.com/git-agency/git-agency/errs"
	"github.com/git-agency/git-agency/store"
)

// landBeginLocked reads inv's record under the lock and finishes or
// records an interrupted earlier land of it. done is the result when that
// land turned out complete (nothing more to do); note says what was found.
func (a *Lander) landBeginLocked(ctx context.Context, inv string) (rec *store.InvocationRecord, done *Result, note string, err error) {
	rec, err = a.Store.ReadInvocation(inv)
	if err != nil {
		return nil, nil, "", errs.StoreCorrupt(a.Store.InvocationMetaPath(inv), err)
	}
	if rec.Land == nil || rec.Land.State != LandInProgress {
		return rec, nil, "", nil
	}
	if rec, err = a.RecoverLandLocked(ctx, rec); err != nil {
		return nil, nil, "", err
	}
	if rec.Land != nil {
		note = rec.Land.Note
	}
	if store.Deref(rec.LandingStatus) != store.LandingLanded {
		return rec, nil, note, nil
	}

	return rec, a.landDoneResult(rec, note), note, nil
}

// landDoneResult is the result of rec's land, found complete and
// finished by a recovery.
func (a *Lander) landDoneResult(rec *store.InvocationRecord, note string) *Result {
	res := &Result{InvocationID: rec.InvocationID, WorktreeID: rec.IntegrationWorktreeID, Clean: true, Note: note, Host: rec.Host}
	if p := rec.Land; p != nil {
		res.TargetHead, res.ResultHead, res.Commits, res.Applied = p.TargetHead, p.ResultHead, p.Commits, p.Applied
	}
	if wt, err := a.Host.WorktreeByID(rec.IntegrationWorktreeID); err == nil {
		res.WorktreeName, res.Branch = wt.Name, wt.Branch
	}
	return res
}

// landConflict records and returns a planned land's conflict.
func (a *Lander) landConflict(res *Result) error {
	inv := res.InvocationID
	a.Event(inv, "land_conflict", map[string]any{"commit": res.ConflictCommit, "files": res.Conflicts})
	return errs.LandConflict(inv, res.ConflictCommit, res.ConflictWhat, res.Conflicts)
}

// commitLandLocked moves the integration branch to a planned (and, when a
// check is set, verified) clean land: it saves what undo needs, records
// the land in progress, fast-forwards the integration tree from
// res.TargetHead by compare-and-swap, then finishes the land.
func (a *Lander) commitLandLocked(ctx context.Context, rec *store.InvocationRecord, wt *store.WorktreeRecord, res *Result) error {
	inv := rec.InvocationID
	if err := a.gateLocked(ctx, wt, inv, res.TargetHead, res.ResultHead, false); err != nil {
		return err
	}

	// What `undo` needs to recreate the sandbox: its branch, and when it
	// holds uncommitted work (only with --apply), that work saved as a
	// checkpoint before the tree goes.
	restore := &store.Restore{Branch: rec.SandboxBranch}
	var err error
	if res.Applied {
		if restore, err = a.Host.SaveSandbox(ctx, rec, store.CheckpointBeforeLand); err != nil {
			return err
		}
	} else if restore.Head, err = a.Repo.RevParse(ctx, "refs/heads/"+rec.SandboxBranch); err != nil {
		return core.SandboxBranchMissingErr(rec)
	}

	progress := &store.LandProgress{State: LandInProgress, StartedAt: a.Stamp(), TargetHead: res.TargetHead,
		Commits: res.Commits, Applied: res.Applied, ResultHead: res.ResultHead, Restore: restore}
	if rec, err = a.Store.UpdateInvocationLocked(inv, func(r *store.InvocationRecord) error {
		r.Land = progress
		r.VerifySkipped = res.Verify == VerifySkipped
		return nil
	}); err != nil {
		return err
	}

	if err := a.Fail(FPLandBeforeUpdate); err != nil {
		return err
	}
	if err := a.Repo.Tree(wt.TreePath).FastForwardBranch(ctx, wt.Branch, res.TargetHead, res.ResultHead, landReflog(inv)); err != nil {
		return a.fastForwardFailedLocked(ctx, rec, wt, res.TargetHead, err)
	}
	if err := a.Fail(FPLandAfterUpdate); err != nil {
		return err
	}
	if rec, err = a.finishLandLocked(ctx, rec, ""); err != nil {
		return err
	}

	a.notifyLand(ctx, rec, NotifyLanded, "landed", fmt.Sprintf("landed on %s at %s", wt.Branch, core.ShortSHA(res.ResultHead)))
	return nil
}
