package agency

import (
	"context"

	"github.com/git-agency/git-agency/gitcore"
)

// addTree registers a new worktree at path on a new branch from start. When
// source (the tree it is made from) uses sparse-checkout, the new tree gets
// the same patterns before any file is written (`worktree add
// --no-checkout`, `sparse-checkout set`, `checkout`): it is never a full
// checkout trimmed afterwards. full opts out. It reports whether the new
// tree is sparse. On error the caller removes the tree and branch. An
// empty branch makes a tree with a detached HEAD (a verify tree).
func (a *App) addTree(ctx context.Context, source, path, branch, start string, full bool) (bool, error) {
	var src gitcore.Sparse
	if !full {
		sp, err := a.sparseOf(ctx, source)
		if err != nil {
			return false, gitErr(err)
		}
		src = sp
	}

	// `git worktree add` copies the sparse patterns of the worktree it runs
	// in; with --full or a non-sparse source those must go.
	here := gitcore.Sparse{}
	if full || source != a.Repo.Toplevel {
		sp, err := a.sparseOf(ctx, a.Repo.Toplevel)
		if err != nil {
			return false, gitErr(err)
		}
		here = sp
	}

	if !src.Enabled && !here.Enabled {
		return false, a.checkoutStep(ctx, path, branch, func() error { return a.worktreeAdd(ctx, path, branch, start, true) })
	}
	if err := a.worktreeAdd(ctx, path, branch, start, false); err != nil {
		return false, a.treeAddErr(ctx, path, branch, err)
	}

	t := a.Repo.Tree(path)
	if src.Enabled {
		if err := t.SparseCheckoutSet(ctx, src); err != nil {
			return false, gitErr(err)
		}
	} else {
		sp, err := t.SparseCheckout(ctx)
		if err != nil {
			return false, gitErr(err)
		}

		if sp.Enabled {
			if err := t.SparseCheckoutDisable(ctx); err != nil {
				return false, gitErr(err)
			}
		}
	}

	return src.Enabled, a.checkoutStep(ctx, path, "", func() error { return t.CheckoutHead(ctx) })
}

// sparseOf is the tree's SparseCheckout. The tree we run in is not sparse
// when the configuration read at start says core.sparseCheckout is off
// (or unset): no git call then.
func (a *App) sparseOf(ctx context.Context, tree string) (gitcore.Sparse, error) {
	if tree == a.Repo.Toplevel {
		if on, ok := a.Config.Bool("core.sparseCheckout", false); ok && !on {
			return gitcore.Sparse{}, nil
		}
	}
	return a.Repo.Tree(tree).SparseCheckout(ctx)
}

// worktreeAdd registers a new worktree at path from start, on a new branch
// (none: a detached HEAD), its files written only with checkout.
func (a *App) worktreeAdd(ctx context.Context, path, branch, start string, checkout bool) error {
	switch {
	case branch == "":
		return a.Repo.WorktreeAddDetached(ctx, path, start, checkout)
	case checkout:
		return a.Repo.WorktreeAdd(ctx, path, branch, start)
	}
	return a.Repo.WorktreeAddNoCheckout(ctx, path, branch, start)
}
