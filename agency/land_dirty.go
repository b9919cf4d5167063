package agency

import (
	"context"

	"github.com/git-agency/git-agency/gitcore"
)

// trackedChanges reports whether tree (HEAD at head, whose tree is
// headTree: "" looks it up) has staged or unstaged changes to tracked
// files. The answer comes from the index and the files when they prove
// the tree unchanged (gitcore's TrackedUnchanged: the index read and its
// files lstat'ed in parallel, no status, which also diffs the index
// against HEAD's trees); anything else is asked of git status.
func (a *App) trackedChanges(ctx context.Context, tree *gitcore.Tree, head, headTree string) (bool, error) {
	if headTree == "" && head != "" {
		headTree, _ = a.Repo.TreeOf(ctx, head)
	}
	if headTree != "" && tree.TrackedUnchanged(ctx, head, headTree) {
		return false, nil
	}
	return tree.HasTrackedChanges(ctx)
}

// sandboxChanges is trackedChanges for a sandbox: a submodule with files
// changed inside it counts (HasTrackedOrSubmoduleChanges), since those go
// with the sandbox when a land removes it.
func (a *App) sandboxChanges(ctx context.Context, tree *gitcore.Tree, head, headTree string) (bool, error) {
	if headTree == "" && head != "" {
		headTree, _ = a.Repo.TreeOf(ctx, head)
	}
	if headTree != "" && tree.TrackedUnchanged(ctx, head, headTree) {
		return false, nil
	}
	return tree.HasTrackedOrSubmoduleChanges(ctx)
}

// sandboxDirty reports whether the sandbox tree at path (its branch at
// tip, base..tip being commits) holds uncommitted work, untracked files
// included, as IsDirty would: tracked files (and files changed inside a
// submodule) through sandboxChanges, then,
// when those are unchanged, git's walk for untracked files alone.
func (a *App) sandboxDirty(ctx context.Context, path string, commits []gitcore.Commit, tip string) (bool, error) {
	tree := a.Repo.Tree(path)
	tipTree := ""
	if n := len(commits); n > 0 && commits[n-1].ID == tip {
		tipTree = commits[n-1].Tree
	}
	if tracked, err := a.sandboxChanges(ctx, tree, tip, tipTree); err != nil || tracked {
		return tracked, err
	}
	return tree.HasUntracked(ctx)
}
