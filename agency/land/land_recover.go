package land

import (
	"context"
	"github.com/git-agency/git-agency/agency/internal/core"

	"github.com/git-agency/git-agency/store"
)

// RecoverLand is for readers: when rec shows a land in progress and no
// command holds the repo lock (so the land was interrupted), it finishes or
// records the interrupted land and returns the updated record. Otherwise
// (or on any failure) it returns rec unchanged.
func (a *Lander) RecoverLand(ctx context.Context, rec *store.InvocationRecord) *store.InvocationRecord {
	if rec == nil || rec.Land == nil || rec.Land.State != LandInProgress {
		return rec
	}
	ctx, unlock, err := a.LockWorkWait(ctx, 0)
	if err != nil {
		return rec // a land (or another command) is at work
	}
	defer unlock()
	cur, err := a.Store.ReadInvocation(rec.InvocationID)
	if err != nil {
		return rec
	}
	if out, err := a.RecoverLandLocked(ctx, cur); err == nil {
		return out
	}
	return cur
}

// RecoverLandLocked looks at an integration tree after a land that was
// interrupted (the record still says in_progress but the caller holds the
// lock, so no land runs) and either finishes it (the integration branch
// already holds the result) or marks it interrupted, saying what state the
// tree is in. A land is never applied twice: the result is recognised by
// the recorded result_head being in the branch's history.
func (a *Lander) RecoverLandLocked(ctx context.Context, rec *store.InvocationRecord) (*store.InvocationRecord, error) {
	p := rec.Land
	wt, err := a.Host.WorktreeByID(rec.IntegrationWorktreeID)
	if err != nil {
		return rec, err
	}
	integ := a.Repo.Tree(wt.TreePath)
	// The branch's tip, not HEAD's: the tree may have been switched.
	head, err := a.Repo.RevParse(ctx, "refs/heads/"+wt.Branch)
	if err != nil {
		return rec, core.GitErr(err)
	}
	interrupted := func(note string) (*store.InvocationRecord, error) {
		out, err := a.Store.UpdateInvocationLocked(rec.InvocationID, func(r *store.InvocationRecord) error {
			if r.Land != nil {
				r.Land.State = LandInterrupted
				r.Land.Note = note
			}
			return nil
		})
		if err != nil {
			return rec, err
		}
		a.Event(rec.InvocationID, "land_interrupted", map[string]any{"note": note})
		return out, nil
	}
	if p.ResultHead != "" && head != "" {
		if ok, _ := a.Repo.IsAncestor(ctx, p.ResultHead, head); ok {
			return a.finishLandLocked(ctx, rec, "an interrupted land was found complete and finished")
		}
	}
	if head != p.TargetHead {
		return interrupted("interrupted; the integration branch has since moved and does not hold this land; nothing of it was applied; land again")
	}
	if p.ResultHead != "" {
		if a.gateLocked(ctx, wt, rec.InvocationID, p.TargetHead, p.ResultHead, true) == nil {
			// Files and index were updated, the branch was not: finish it.
			if err := a.Repo.MoveBranch(ctx, wt.Branch, p.TargetHead, p.ResultHead, landReflog(rec.InvocationID)); err == nil {
				return a.finishLandLocked(ctx, rec, "an interrupted land was found half-done and finished")
			}
		}
	}
	dirty, err := integ.HasTrackedChanges(ctx)
	if err == nil && !dirty {
		return interrupted("interrupted before the integration tree was updated; nothing was applied; land again")
	}
	return interrupted("interrupted while updating the integration tree " + wt.TreePath +
		": its branch is unchanged but some files may be updated; check 'git status' there, restore them, then land again")
}
