package land

import (
	"context"

	"github.com/git-agency/git-agency/agency/internal/core"
	"github.com/git-agency/git-agency/errs"
	"github.com/git-agency/git-agency/store"
)

// gateLocked is the one check before an integration branch moves: every
// path that moves one goes through it, under the repo lock, right before
// the move (a single land, --apply, several, a batch, autoLand, watch,
// and the recovery of an interrupted land). The integration tree must be
// on its branch; the branch at from, the tip the candidate was built on
// (errHeadMoved otherwise: the caller builds it again or reports it); the
// branch's moves logged; and the tree clean with nothing in the way of
// to. halfDone (recovering a land whose files and index were switched but
// whose branch was not) asks instead that the index holds to's tree.
// The move that follows is a compare-and-swap of refs/heads/<branch> from
// from, never whatever HEAD points at.
func (a *Lander) gateLocked(ctx context.Context, wt *store.WorktreeRecord, inv, from, to string, halfDone bool) error {
	if err := a.Host.CheckOnBranch(ctx, wt); err != nil {
		return err
	}
	tip, err := a.Repo.RevParse(ctx, "refs/heads/"+wt.Branch)
	if err != nil {
		return core.GitErr(err)
	}
	if tip != from {
		return errHeadMoved
	}
	if err := a.Host.CheckRefsLogged(wt.Branch, tip); err != nil {
		return err
	}
	integ := a.Repo.Tree(wt.TreePath)
	if halfDone {
		if same, err := integ.IndexMatches(ctx, to); err != nil || !same {
			return errs.LandDirtyIntegration(wt.Name, wt.TreePath)
		}
		return nil
	}
	dirty, err := a.trackedChanges(ctx, integ, tip, "")
	if err != nil {
		return core.GitErr(err)
	}
	if dirty {
		return a.Host.DirtyErr(ctx, wt.TreePath, errs.LandDirtyIntegration(wt.Name, wt.TreePath))
	}
	paths, err := integ.BlockingPaths(ctx, from, to)
	if err != nil {
		return core.GitErr(err)
	}
	if len(paths) > 0 {
		return errs.LandFilesInTheWay(inv, wt.TreePath, paths)
	}
	return nil
}
