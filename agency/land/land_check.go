package land

import (
	"context"

	"github.com/git-agency/git-agency/agency/internal/core"
	"github.com/git-agency/git-agency/errs"
)

// CheckLand is `land --check`: whether the land would apply cleanly onto the
// current integration HEAD, and which files would conflict. It writes no
// tree, index, ref or record (only unreferenced objects).
func (a *Lander) CheckLand(ctx context.Context, opts Options) (*Result, error) {
	rec, err := a.Host.ResolveInvocation(opts.Query)
	if err != nil {
		return nil, err
	}
	// A read: the record as reads show it (a dead supervisor's outcome in
	// memory only); no reconcile, no queue drain, no land recovery.
	rec = a.Host.View(ctx, rec)
	if rec.Land != nil && rec.Land.State == LandInProgress {
		return nil, errs.LandCheckInterrupted(rec.InvocationID)
	}
	res, _, err := a.landPlan(ctx, rec, opts, true)
	if err != nil {
		return nil, err
	}
	// The prediction's commits are git-agency's, not the land's: only
	// the tree it would make is the same.
	if res.Clean {
		if res.ResultTree, err = a.Repo.TreeOf(ctx, res.ResultHead); err != nil {
			return nil, core.GitErr(err)
		}
		res.ResultHead = ""
	}
	if _, partners, ok := a.Host.Forecast(ctx, rec.IntegrationWorktreeID, rec.InvocationID); ok {
		res.ConflictsWith = append(res.ConflictsWith, partners...)
	}
	return res, nil
}
