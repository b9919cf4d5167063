package undo

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/git-agency/git-agency/agency/internal/core"
	"github.com/git-agency/git-agency/errs"
	"github.com/git-agency/git-agency/store"
)

// Failpoints of Undo, in order (an undo killed at any of them is finished
// by the next `undo`).
const (
	FPUndoAfterStart  = "undo:after-start"
	FPUndoAfterRef    = "undo:after-ref" // the branch moved back, not yet its files
	FPUndoAfterBranch = "undo:after-branch"
	FPUndoAfterTree   = "undo:after-tree"
	FPUndoAfterRecord = "undo:after-record"
)

// Result is what `undo` did.
type Result struct {
	// Seq is the undo's own number in the operation log.
	Seq int `json:"seq"`
	// Undone is the operation reversed.
	Undone store.OplogEntry `json:"undone"`
	// Resumed is set when an interrupted undo was finished.
	Resumed bool `json:"resumed"`
	// Notes say what was left alone, and why.
	Notes []string `json:"notes,omitempty"`
	// Host is the host of the invocation whose land or discard was
	// undone: no sandbox tree is made here, its fetched branch lands.
	Host string `json:"host,omitempty"`
	// Next is the operation a further `undo` would reverse.
	Next *store.OplogEntry `json:"next,omitempty"`
}

// Oplog reads the operation log, folded: `undo --list`.
func (a *Undoer) Oplog() (*store.Oplog, error) {
	lines, err := a.Store.ReadOplog()
	if err != nil {
		return nil, err
	}
	return store.FoldOplog(lines), nil
}

// Describe is one line saying what an operation did.
func Describe(e store.Operation) string {
	switch e.Op {
	case store.OpLand:
		return fmt.Sprintf("land %s onto %s (%s..%s)", e.InvocationID, e.Branch, core.ShortSHA(e.Before), core.ShortSHA(e.After))
	case store.OpDiscard:
		return "discard " + e.InvocationID
	case store.OpCheckpointApply:
		return fmt.Sprintf("checkpoint apply %d to %s", e.Applied, e.InvocationID)
	case store.OpWorktreeRemove:
		return fmt.Sprintf("worktree rm --force %s", e.WorktreeName)
	case store.OpUndo:
		return fmt.Sprintf("undo of #%d", e.Undoes)
	}

	return e.Op
}

// Undo is `git agency undo`: under the repo lock, reverse the newest
// operation of the log not undone yet (or finish an undo that was
// interrupted). Every refusal comes before the first change. The undo is
// logged as started before it changes anything and as done at the end;
// each step looks at what is there first, so running it again after a
// crash finishes it.
func (a *Undoer) Undo(ctx context.Context) (*Result, error) {
	ctx, unlock, err := a.LockWork(ctx)
	if err != nil {
		return nil, err
	}
	defer unlock()
	lines, log, target, err := a.undoTarget()
	if err != nil {
		return nil, err
	}

	res := &Result{}
	if log.Interrupted != nil {
		res.Seq, res.Resumed = log.Interrupted.Seq, true
	}

	u := &undoRun{a: a, res: res, entry: target.Operation}

	if !res.Resumed {
		res.Seq = store.NextSeq(lines)
	}

	switch target.Op {
	case store.OpLand:
		err = u.land(ctx)
	case store.OpDiscard:
		err = u.discard(ctx)
	case store.OpCheckpointApply:
		err = u.checkpointApply(ctx)
	case store.OpWorktreeRemove:
		err = u.worktreeRemove(ctx)
	default:
		err = errs.Internal("operation #%d: unknown kind %q", target.Seq, target.Op)
	}

	if err != nil {
		if e := (*errs.Error)(nil); res.Resumed && errors.As(err, &e) {
			return nil, e.With(fmt.Sprintf("undo #%d of #%d was interrupted and must finish before any other undo", res.Seq, target.Seq))
		}
		return nil, err
	}

	if _, err := a.Store.AppendOperation(u.undoLine(store.UndoDone)); err != nil {
		return nil, err
	}

	res.Undone = *target
	res.Undone.UndoneBy, res.Undone.UndoState = res.Seq, store.UndoDone
	if lines, err := a.Store.ReadOplog(); err == nil {
		res.Next = store.FoldOplog(lines).Next()
	}

	return res, nil
}

// undoRun is one undo in progress.
type undoRun struct {
	a     *Undoer
	res   *Result
	entry store.Operation
}

func (u *undoRun) resume() bool { return u.res.Resumed }

func (u *undoRun) undoLine(state string) store.Operation {
	return store.Operation{Seq: u.res.Seq, Op: store.OpUndo, Undoes: u.entry.Seq, State: state,
		InvocationID: u.entry.InvocationID, WorktreeID: u.entry.WorktreeID, WorktreeName: u.entry.WorktreeName}
}

// begin logs the undo as started: from here on, a crash is finished by the
// next undo. Every check comes before it.
func (u *undoRun) begin() error {
	if !u.resume() {
		if _, err := u.a.Store.AppendOperation(u.undoLine(store.UndoStarted)); err != nil {
			return err
		}
	}
	return u.a.Fail(FPUndoAfterStart)
}

// abort logs that a started undo failed having changed nothing: it is
// not interrupted, the next undo starts afresh.
func (u *undoRun) abort() {
	if _, err := u.a.Store.AppendOperation(u.undoLine(store.UndoAborted)); err != nil {
		// The undo stays "started" in the log: the next one finishes it.
		u.a.Warning("", err)
	}
}

func (u *undoRun) note(format string, args ...any) {
	u.res.Notes = append(u.res.Notes, fmt.Sprintf(format, args...))
}

// what names the operation in errors.
func (u *undoRun) what() string { return fmt.Sprintf("#%d (%s)", u.entry.Seq, Describe(u.entry)) }

// invocation reads the record of the entry's invocation.
func (u *undoRun) invocation() (*store.InvocationRecord, error) {
	rec, err := u.a.Store.ReadInvocation(u.entry.InvocationID)
	if err != nil {
		if os.IsNotExist(err) {
			return nil, errs.UndoExpired(u.what(), "the record of invocation "+u.entry.InvocationID)
		}
		return nil, errs.StoreCorrupt(u.a.Store.InvocationMetaPath(u.entry.InvocationID), err)
	}

	return rec, nil
}
