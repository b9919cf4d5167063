package agency

import (
	"context"

	"github.com/git-agency/git-agency/agency/internal/core"
	"github.com/git-agency/git-agency/gitcore"
	"github.com/git-agency/git-agency/store"
)

// DiffResult is `agent diff`: the committed part (base..sandbox branch) and
// the sandbox's uncommitted part (tracked and untracked files).
type DiffResult struct {
	Invocation *store.InvocationRecord `json:"-"`
	Commits    []gitcore.Commit        `json:"-"`
	Log        []byte                  `json:"-"`
	Patch      []byte                  `json:"-"`
	// SandboxPresent is false once the sandbox tree was removed.
	SandboxPresent bool
	// Astray: commits the sandbox's HEAD holds that its branch does not
	// (nil when none); land refuses them, discard keeps them under
	// refs/agency/kept/<inv>/.
	Astray      *Astray
	Uncommitted []byte
	// UncommittedFiles are the paths that differ between the sandbox HEAD
	// and its working files.
	UncommittedFiles []string
	// Denied are untracked denylisted files, left out of Uncommitted.
	Denied []string
	// DirtySubmodules are submodules with changed or untracked files
	// inside them: not in Uncommitted, no checkpoint or land holds them.
	DirtySubmodules []string
}

// Diff computes `agent diff`.
func (a *App) Diff(ctx context.Context, query string, o gitcore.DiffOptions) (*DiffResult, error) {
	rec, err := a.ResolveInvocation(query)
	if err != nil {
		return nil, err
	}

	rec = a.View(ctx, rec)
	tip, err := a.Repo.RevParse(ctx, "refs/heads/"+rec.SandboxBranch)
	if err != nil {
		return nil, SandboxBranchMissingErr(rec)
	}

	res := &DiffResult{Invocation: rec}
	if res.Commits, err = a.Repo.Commits(ctx, rec.BaseCommit, tip); err != nil {
		return nil, gitErr(err)
	}
	if res.Log, err = a.Repo.LogOneline(ctx, rec.BaseCommit, tip, o.Color); err != nil {
		return nil, gitErr(err)
	}
	if res.Patch, err = a.Repo.Diff(ctx, rec.BaseCommit, tip, o); err != nil {
		return nil, gitErr(err)
	}

	tree := a.sandboxTree(rec)
	if tree == "" {
		return res, nil
	}

	res.SandboxPresent = true
	res.DirtySubmodules, _ = a.dirtySubmodules(ctx, tree) // said when known
	if res.Astray, err = a.sandboxAstray(ctx, rec, tree, tip); err != nil {
		return nil, err
	}

	snap, err := a.snapshotSandbox(ctx, tree, nil)
	if err != nil {
		return nil, err
	}

	if res.Denied = snap.Denied; len(snap.Denied) > 0 {
		// Show the rest: the same snapshot without the denylisted files.
		if snap, err = a.snapshotSandbox(ctx, tree, snap.Denied); err != nil {
			return nil, err
		}
	}

	if snap.Head == "" {
		return res, nil
	}
	if res.UncommittedFiles, err = a.Repo.DiffNames(ctx, snap.Head, snap.Tree); err != nil {
		return nil, gitErr(err)
	}

	if len(res.UncommittedFiles) > 0 {
		if res.Uncommitted, err = a.Repo.Diff(ctx, snap.Head, snap.Tree, o); err != nil {
			return nil, gitErr(err)
		}
	}

	return res, nil
}

// SandboxBranchMissingErr is the error for a deleted sandbox branch.
func SandboxBranchMissingErr(rec *store.InvocationRecord) error {
	return core.SandboxBranchMissingErr(rec)
}
