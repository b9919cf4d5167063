package agency

import (
	"context"
	"errors"

	"github.com/git-agency/git-agency/agency/internal/core"
	"github.com/git-agency/git-agency/store"
)

// cleanupCtx is the context to undo a failed step with (core.CleanupCtx).
func cleanupCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	return core.CleanupCtx(ctx)
}

// withCleanup is err with what the cleanup after it could not undo (nil:
// err as it is).
func withCleanup(err, cleanupErr error) error { return core.WithCleanup(err, cleanupErr) }

// undoAdd takes back what this command made for a new tree: when added,
// what `git worktree add -b branch tree` made (the tree, its registration,
// its branch), then the directory dir (inside parent) that holds the tree.
// It returns what is left behind, if anything; what was never made or is
// already gone does not count.
func (a *App) undoAdd(ctx context.Context, added bool, parent, dir, tree, branch string) error {
	ctx, cancel := cleanupCtx(ctx)
	defer cancel()
	var left []error

	if added {
		// Fails when git never registered the tree: the directory goes
		// next, and prune drops a registration whose directory is gone.
		_ = a.Repo.WorktreeRemove(ctx, tree, true)
	}

	if err := store.RemoveAllInside(parent, dir); err != nil {
		left = append(left, err)
	}

	if !added {
		return errors.Join(left...)
	}

	if err := a.pruneOurs(ctx); err != nil {
		left = append(left, err)
	}

	if err := a.Repo.DeleteBranch(ctx, branch, true); err != nil {
		if ok, berr := a.Repo.BranchExists(ctx, branch); ok || berr != nil {
			left = append(left, gitErr(err))
		}
	}

	return errors.Join(left...)
}
