package undo

import (
	"context"

	"github.com/git-agency/git-agency/agency/internal/core"
	"github.com/git-agency/git-agency/errs"
	"github.com/git-agency/git-agency/gitcore"
	"github.com/git-agency/git-agency/store"
)

// undoTarget reads the log and the operation the next undo is for: the
// one an interrupted undo must finish, else the newest not undone. The
// caller holds the repo lock.
func (a *Undoer) undoTarget() ([]store.Operation, *store.Oplog, *store.OplogEntry, error) {
	lines, err := a.Store.ReadOplog()
	if err != nil {
		return nil, nil, nil, err
	}

	log := store.FoldOplog(lines)
	target := log.Next()
	if log.Interrupted != nil {
		target = log.Entry(log.Interrupted.Undoes)
	}

	if target == nil {
		return nil, nil, nil, errs.NothingToUndo()
	}

	return lines, log, target, nil
}

// SkipUndo is `git agency undo --skip`: under the repo lock, the newest
// operation not undone yet (the one an interrupted undo must finish,
// first) is marked skipped by an appended line, and nothing else changes:
// the next undo reaches the operation before it.
func (a *Undoer) SkipUndo(ctx context.Context) (*Result, error) {
	_, unlock, err := a.LockWork(ctx)
	if err != nil {
		return nil, err
	}
	defer unlock()
	lines, _, target, err := a.undoTarget()
	if err != nil {
		return nil, err
	}

	u := &undoRun{a: a, res: &Result{Seq: store.NextSeq(lines)}, entry: target.Operation}
	if _, err := a.Store.AppendOperation(u.undoLine(store.UndoSkipped)); err != nil {
		return nil, err
	}

	res := u.res
	res.Undone = *target
	res.Undone.UndoneBy, res.Undone.UndoState = res.Seq, store.UndoSkipped
	if lines, err := a.Store.ReadOplog(); err == nil {
		res.Next = store.FoldOplog(lines).Next()
	}

	return res, nil
}

// checkoutSparse adds branch's tree at path with exactly sp's sparse
// checkout (none when not enabled) before checking its files out.
func (a *Undoer) checkoutSparse(ctx context.Context, path, branch string, sp gitcore.Sparse) error {
	if err := a.Repo.WorktreeAddExistingNoCheckout(ctx, path, branch); err != nil {
		return core.GitErr(err)
	}

	t := a.Repo.Tree(path)
	if sp.Enabled {
		if err := t.SparseCheckoutSet(ctx, sp); err != nil {
			return core.GitErr(err)
		}
	} else {
		// `git worktree add` copies the main tree's patterns.
		got, err := t.SparseCheckout(ctx)
		if err != nil {
			return core.GitErr(err)
		}

		if got.Enabled {
			if err := t.SparseCheckoutDisable(ctx); err != nil {
				return core.GitErr(err)
			}
		}
	}

	return core.GitErr(t.CheckoutHead(ctx))
}
