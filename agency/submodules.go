package agency

import (
	"context"

	"github.com/git-agency/git-agency/errs"
	"github.com/git-agency/git-agency/gitcore"
)

// dirtySubmodules lists the submodules of tree with changed or untracked
// files inside them (see gitcore.DirtySubmodules); no git call when the
// tree's index holds no gitlink. The index decides, not .gitmodules: a
// repository embedded by `git add` is a gitlink with no .gitmodules entry.
func (a *App) dirtySubmodules(ctx context.Context, tree string) ([]string, error) {
	if tree == "" {
		return nil, nil
	}

	t := a.Repo.Tree(tree)
	if !t.MayHoldGitlinks() {
		return nil, nil
	}

	st, err := t.Changes(ctx)
	if err != nil {
		return nil, gitErr(err)
	}

	return gitcore.DirtySubmodules(st), nil
}

// refuseSubmoduleDirt refuses the land of a sandbox with changed or
// untracked files inside a submodule: no snapshot holds them (only the
// commit a submodule has checked out), so --apply could not take them and
// the land would remove them with the sandbox. No git call when the
// tree's index holds no gitlink.
func (a *App) refuseSubmoduleDirt(ctx context.Context, inv, tree string) error {
	subs, err := a.dirtySubmodules(ctx, tree)
	if err != nil || len(subs) == 0 {
		return err
	}
	return errs.LandSubmoduleDirty(inv, tree, subs)
}
