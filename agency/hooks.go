package agency

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/git-agency/git-agency/errs"
	"github.com/git-agency/git-agency/gitcore"
)

// New trees (integration worktrees and sandboxes) run the repository's
// post-checkout hook, as every `git worktree add` does: a hook that
// installs dependencies is what makes a new tree usable, and what the
// user's hooks do is theirs to decide. What git-agency adds: a hook that
// fails is named, with its output, and the way to skip it; a slow one is
// said while it runs.

// hookSlowAfter is how long making a new tree may take before the user is
// told that the repository's post-checkout hook is running.
const hookSlowAfter = 2 * time.Second

// checkoutStep runs step, a git command that writes a new tree's files
// (and so runs the post-checkout hook), at tree on branch ("" when the
// branch exists already). When the step outlasts hookSlowAfter and a hook
// is there, the user is told (a.Warn). A failure is explained:
// E_BRANCH_AGENCY, E_HOOK_FAILED, or git's own error.
func (a *App) checkoutStep(ctx context.Context, tree, branch string, step func() error) error {
	var wg sync.WaitGroup
	wg.Add(1)
	timer := time.AfterFunc(hookSlowAfter, func() {
		defer wg.Done()
		if hook := a.Repo.HookPath(ctx, "post-checkout"); hook != "" {
			a.warn("", errs.HookSlow(hook, tree, hookSlowAfter))
		}
	})
	err := step()

	if timer.Stop() {
		wg.Done()
	}

	wg.Wait()
	if err == nil {
		return nil
	}

	return a.treeAddErr(ctx, tree, branch, err)
}

// treeAddErr explains a failed `git worktree add` (or the checkout that
// fills a tree made with --no-checkout) of tree on branch.
func (a *App) treeAddErr(ctx context.Context, tree, branch string, err error) error {
	var ge *gitcore.GitError
	if !errors.As(err, &ge) {
		return err
	}

	if strings.HasPrefix(branch, "agency/") {
		if ok, rerr := a.Repo.BranchExists(ctx, "agency"); rerr == nil && ok {
			return errs.BranchAgency("agency")
		}
	}

	// The hook runs once the files are written: a tree with its .git there
	// and a hook to run failed in the hook (or git failed after the hook;
	// either way the hook's output is in stderr).
	if hook := a.Repo.HookPath(ctx, "post-checkout"); hook != "" {
		if _, serr := os.Lstat(filepath.Join(tree, ".git")); serr == nil {
			return errs.HookFailed(hook, tree, ge.Stderr)
		}
	}

	return gitErr(err)
}

// dirtyErr is e, a refusal because tree has changes, with a hint that can
// be followed when the tree is in the middle of a merge (or cherry-pick,
// revert, rebase): stashing is not possible there.
func (a *App) dirtyErr(ctx context.Context, tree string, e *errs.Error) *errs.Error {
	if op := a.Repo.Tree(tree).InProgress(ctx); op != "" {
		return errs.MidOperation(e, op, tree)
	}
	return e
}
