package land

import (
	"context"
	"github.com/git-agency/git-agency/agency/internal/core"
	"os"

	"github.com/git-agency/git-agency/checkpoint"
	"github.com/git-agency/git-agency/gitcore"
	"github.com/git-agency/git-agency/runner/stream"
	"github.com/git-agency/git-agency/store"
)

// Display statuses of a finished, pending invocation that land would not
// take as it is (instead of "ready to land").
const (
	// DisplayNothingToLand: no commits on its branch and no changes in its
	// sandbox that land would take (denylisted files are never landed).
	DisplayNothingToLand = stream.StatusNothingToLand
	// DisplayNeedsApply: its sandbox holds uncommitted work (agents rarely
	// commit), which only `land --apply` takes; plain land refuses
	// (E_UNLANDED_CHANGES).
	DisplayNeedsApply = stream.StatusReadyToApply
	// DisplaySandboxMissing: its sandbox tree is gone and its branch holds
	// no commits: there is nothing left to land.
	DisplaySandboxMissing = "sandbox missing"
	// DisplayOffBranch: the sandbox's HEAD holds commits its branch does
	// not (a detached HEAD, another branch); land refuses until they are on
	// the branch.
	DisplayOffBranch = "commits off branch"
)

// Astray is the commits a sandbox's HEAD holds that its branch does not: an
// agent checked out --detach (or another branch) and committed there.
type Astray struct {
	Where   string // "detached at <sha>" or "on branch <name>"
	Head    string
	Branch  string // the other branch, "" when detached
	Commits []gitcore.Commit
}

// SandboxAstray looks at the sandbox tree's HEAD: nil when it is on the
// sandbox branch, or holds nothing the branch (tip) does not.
func (a *Lander) SandboxAstray(ctx context.Context, rec *store.InvocationRecord, tree, tip string) (*Astray, error) {
	sbx := a.Repo.Tree(tree)
	br, err := sbx.CurrentBranch(ctx)
	if err != nil {
		return nil, core.GitErr(err)
	}
	if br == rec.SandboxBranch {
		return nil, nil
	}
	head, err := sbx.Head(ctx)
	if err != nil || head == "" || head == tip {
		return nil, core.GitErr(err)
	}
	from := tip
	if tip == "" {
		from = rec.BaseCommit
	} else if ok, err := a.Repo.IsAncestor(ctx, head, tip); err != nil {
		return nil, core.GitErr(err)
	} else if ok {
		return nil, nil
	}
	commits, err := a.Repo.Commits(ctx, from, head)
	if err != nil {
		return nil, core.GitErr(err)
	}
	out := &Astray{Where: "detached at " + core.ShortSHA(head), Head: head, Branch: br, Commits: commits}
	if br != "" {
		out.Where = "on branch " + br
	}
	return out, nil
}

// LandDisplay refines "ready to land" for a finished, pending invocation:
// DisplayNothingToLand, DisplaySandboxMissing or DisplayOffBranch when land
// would not take it as it is; display unchanged otherwise. (ls and watch
// take the same answer from the forecast's cache: see forecasts.)
func (a *Lander) LandDisplay(ctx context.Context, rec *store.InvocationRecord, display string) string {
	if display != stream.StatusReadyToLand {
		return display
	}
	tip, err := a.Repo.RevParse(ctx, "refs/heads/"+rec.SandboxBranch)
	if err != nil {
		return display // land says what is wrong (E_BRANCH_NOT_FOUND)
	}
	if h := a.LandHold(ctx, rec, tip); h != "" {
		return h
	}
	return display
}

// LandHold says why land would not take a pending invocation (its sandbox
// branch at tip) as it is: DisplayNothingToLand, DisplaySandboxMissing,
// DisplayOffBranch, DisplayNeedsApply (only with --apply), or "" when it
// would.
func (a *Lander) LandHold(ctx context.Context, rec *store.InvocationRecord, tip string) string {
	commits := tip != rec.BaseCommit
	if commits {
		if n, err := a.Repo.Commits(ctx, rec.BaseCommit, tip); err == nil && len(n) == 0 {
			commits = false
		}
	}
	tree := a.Store.SandboxTreePath(rec.InvocationID)
	if _, err := os.Stat(tree); err != nil {
		if commits {
			return ""
		}
		return DisplaySandboxMissing
	}
	if as, err := a.SandboxAstray(ctx, rec, tree, tip); err == nil && as != nil {
		return DisplayOffBranch
	}
	st, err := a.Repo.Tree(tree).Status(ctx)
	if err != nil {
		return ""
	}
	deny := checkpoint.FullDenylist(checkpoint.DenylistFromConfig(a.Config))
	for _, e := range st {
		if e.Kind == gitcore.StatusIgnored {
			continue
		}
		if e.Kind == gitcore.StatusUntracked && gitcore.Denied(e.Path, deny) {
			continue
		}
		if gitcore.OnlySubmoduleDirt(e) {
			continue // files inside a submodule: no checkpoint holds them, land --apply has nothing of it
		}
		return DisplayNeedsApply
	}
	if commits {
		return ""
	}
	return DisplayNothingToLand
}

// IntegrationDirty reports whether an integration worktree's tree has
// uncommitted changes to tracked files: land refuses into it
// (E_DIRTY_WORKTREE) whatever the forecast says of the merge. False when it
// cannot tell (land says what is wrong).
//
// ls asks on every read, so the answer comes from files when it can: with
// the tip and tree the forecast cached, a tree whose index and files are
// proven unchanged (gitcore's TrackedUnchanged: the index read and its
// files lstat'ed, no status) is clean; anything else is asked of git.
func (a *Lander) IntegrationDirty(ctx context.Context, worktreeID string) bool {
	wt, err := a.Store.ReadWorktree(worktreeID)
	if err != nil || wt.State != store.StatePresent {
		return false
	}
	c := a.Store.ReadForecast(worktreeID)
	return integrationDirtyAt(ctx, a.Repo.Tree(wt.TreePath), c.Head, c.HeadTree)
}

// integrationDirtyAt is IntegrationDirty of the tree integ whose branch
// is at head, whose tree is headTree.
func integrationDirtyAt(ctx context.Context, integ *gitcore.Tree, head, headTree string) bool {
	if integ.TrackedUnchanged(ctx, head, headTree) {
		return false
	}
	dirty, err := integ.HasTrackedChanges(ctx)
	return err == nil && dirty
}

// StartDirtyCheck starts IntegrationDirty of the integration tree at
// tree (its branch at head, whose tree is headTree) and returns the
// function that waits for its answer.
func (a *Lander) StartDirtyCheck(ctx context.Context, tree, head, headTree string) func() bool {
	done := make(chan bool, 1)
	go func() { done <- integrationDirtyAt(ctx, a.Repo.Tree(tree), head, headTree) }()
	return func() bool { return <-done }
}
