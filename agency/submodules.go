package agency

import (
	"context"
	"os"
	"path/filepath"

	"github.com/git-agency/git-agency/errs"
	"github.com/git-agency/git-agency/gitcore"
)

// dirtySubmodules lists the submodules of tree with changed or untracked
// files inside them (see gitcore.DirtySubmodules); no git call when the
// tree has no .gitmodules.
func (a *App) dirtySubmodules(ctx context.Context, tree string) []string {
	if tree == "" {
		return nil
	}
	if _, err := os.Stat(filepath.Join(tree, ".gitmodules")); err != nil {
		return nil
	}
	st, err := a.Repo.Tree(tree).Status(ctx)
	if err != nil {
		return nil
	}
	return gitcore.DirtySubmodules(st)
}

// sandboxDirty reports whether a sandbox tree has uncommitted changes
// (untracked files included), for land. Changed or untracked files inside
// a submodule refuse the land: no snapshot holds them (only the commit a
// submodule has checked out), so --apply could not take them and the land
// would remove them with the sandbox.
func (a *App) sandboxDirty(ctx context.Context, inv, tree string) (bool, error) {
	st, err := a.Repo.Tree(tree).Changes(ctx)
	if err != nil {
		return false, gitErr(err)
	}
	if subs := gitcore.DirtySubmodules(st); len(subs) > 0 {
		return true, errs.LandSubmoduleDirty(inv, tree, subs)
	}
	for _, e := range st {
		if e.Kind != gitcore.StatusIgnored {
			return true, nil
		}
	}
	return false, nil
}
