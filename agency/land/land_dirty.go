package land

import (
	"context"
	"github.com/git-agency/git-agency/agency/internal/core"

	"github.com/git-agency/git-agency/gitcore"
	"github.com/git-agency/git-agency/store"
)

// trackedChanges reports whether tree (HEAD at head, whose tree is
// headTree: "" looks it up) has staged or unstaged changes to tracked
// files. The answer comes from the index and the files when they prove
// the tree unchanged (gitcore's TrackedUnchanged: the index read and its
// files lstat'ed in parallel, no status, which also diffs the index
// against HEAD's trees); anything else is asked of git status.
func (a *Lander) trackedChanges(ctx context.Context, tree *gitcore.Tree, head, headTree string) (bool, error) {
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
func (a *Lander) sandboxChanges(ctx context.Context, tree *gitcore.Tree, head, headTree string) (bool, error) {
	if headTree == "" && head != "" {
		headTree, _ = a.Repo.TreeOf(ctx, head)
	}
	if headTree != "" && tree.TrackedUnchanged(ctx, head, headTree) {
		return false, nil
	}
	return tree.HasTrackedOrSubmoduleChanges(ctx)
}

// SandboxDirty reports whether the sandbox tree at path (its branch at
// tip, base..tip being commits) holds uncommitted work, untracked files
// included, as IsDirty would: tracked files (and files changed inside a
// submodule) through sandboxChanges, then,
// when those are unchanged, git's walk for untracked files alone.
func (a *Lander) SandboxDirty(ctx context.Context, path string, commits []gitcore.Commit, tip string) (bool, error) {
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

// dirtyAhead is a sandbox's dirty check started before it is needed
// (sandboxDirtyAhead).
type dirtyAhead struct {
	done   chan struct{}
	cancel context.CancelFunc
	tree   string
	tip    string
	dirty  bool
	err    error
}

// sandboxDirtyAhead starts SandboxDirty of rec's sandbox tree, at its
// branch's tip, in the background: its walk of the sandbox then overlaps
// the integration tree's checks and the replay, which do not depend on it.
// The caller must call stop (it ends the check if still running and waits
// for it).
func (a *Lander) sandboxDirtyAhead(ctx context.Context, rec *store.InvocationRecord) *dirtyAhead {
	ctx, cancel := context.WithCancel(ctx)
	d := &dirtyAhead{done: make(chan struct{}), cancel: cancel, tree: a.SandboxTree(rec)}
	if d.tree == "" {
		close(d.done)
		return d
	}
	go func() {
		defer close(d.done)
		if d.tip, d.err = a.Repo.RevParse(ctx, "refs/heads/"+rec.SandboxBranch); d.err == nil {
			d.dirty, d.err = a.SandboxDirty(ctx, d.tree, nil, d.tip)
		}
	}()
	return d
}

// result is the check's answer; ok is false when it failed or judged
// another tree or tip (then ask SandboxDirty). Safe on nil.
func (d *dirtyAhead) result(tree, tip string) (dirty, ok bool) {
	if d == nil {
		return false, false
	}
	<-d.done
	return d.dirty, d.err == nil && d.tree != "" && d.tree == tree && d.tip == tip
}

// stop ends the check and waits for it.
func (d *dirtyAhead) stop() {
	d.cancel()
	<-d.done
}

// sandboxState checks the sandbox tree of a land (its HEAD on its branch
// at tip, no changes inside a submodule) and says whether it holds
// uncommitted work, taking ahead's answer when it judged this tree and tip.
func (a *Lander) sandboxState(ctx context.Context, rec *store.InvocationRecord, tree string, commits []gitcore.Commit, tip string, ahead *dirtyAhead) (bool, error) {
	if err := a.checkSandboxHead(ctx, rec, tree, tip); err != nil {
		return false, err
	}
	dirty, ok := ahead.result(tree, tip)
	if !ok {
		var err error
		if dirty, err = a.SandboxDirty(ctx, tree, commits, tip); err != nil {
			return false, core.GitErr(err)
		}
	}
	if err := a.Host.RefuseSubmoduleDirt(ctx, rec.InvocationID, tree); err != nil {
		return false, err
	}
	return dirty, nil
}
