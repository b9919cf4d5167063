package agency

import (
	"context"

	"github.com/git-agency/git-agency/agency/undo"
	"github.com/git-agency/git-agency/checkpoint"
	"github.com/git-agency/git-agency/errs"
	"github.com/git-agency/git-agency/gitcore"
	"github.com/git-agency/git-agency/store"
)

// UndoResult is what `undo` did (package undo).
type UndoResult = undo.Result

// undoer is undo for one call: a's core as it is now and a as its host.
func (a *App) undoer() *undo.Undoer {
	return &undo.Undoer{Core: a.core(), Host: undoHost{a}}
}

// Undo is `git agency undo` (undo.Undoer.Undo).
func (a *App) Undo(ctx context.Context) (*UndoResult, error) { return a.undoer().Undo(ctx) }

// SkipUndo is `git agency undo --skip` (undo.Undoer.SkipUndo).
func (a *App) SkipUndo(ctx context.Context) (*UndoResult, error) {
	return a.undoer().SkipUndo(ctx)
}

// Oplog reads the operation log, folded: `undo --list`
// (undo.Undoer.Oplog).
func (a *App) Oplog() (*store.Oplog, error) { return a.undoer().Oplog() }

// Describe is one line saying what an operation did (undo.Describe).
func Describe(e store.Operation) string { return undo.Describe(e) }

// saveSandbox is undo.Undoer.SaveSandbox: what land and discard save so
// that undo can bring the sandbox back.
func (a *App) saveSandbox(ctx context.Context, rec *store.InvocationRecord, reason string) (*store.Restore, error) {
	return a.undoer().SaveSandbox(ctx, rec, reason)
}

// resetFiles is core.Core.ResetFiles.
func (a *App) resetFiles(ctx context.Context, path, commit string, keep []string) error {
	c := a.core()
	return c.ResetFiles(ctx, path, commit, keep)
}

// undoHost is what undo asks of the rest of agency (undo.Host).
type undoHost struct{ a *App }

func (h undoHost) WorktreeByID(id string) (*store.WorktreeRecord, error) { return h.a.WorktreeByID(id) }

func (h undoHost) CheckOnBranch(ctx context.Context, wt *store.WorktreeRecord) error {
	return h.a.CheckOnBranch(ctx, wt)
}

func (h undoHost) WriteMarker(tree string) error { return WriteMarker(tree) }

func (h undoHost) WriteAgencyIgnore(tree string) error { return WriteAgencyIgnore(tree) }

func (h undoHost) DirtyErr(ctx context.Context, tree string, e *errs.Error) *errs.Error {
	return h.a.dirtyErr(ctx, tree, e)
}

func (h undoHost) ReconcileLocked(ctx context.Context, r *store.InvocationRecord) *store.InvocationRecord {
	return h.a.reconcileLocked(ctx, r)
}

func (h undoHost) SandboxPresent(rec *store.InvocationRecord) error { return h.a.sandboxPresent(rec) }

func (h undoHost) SnapshotSandbox(ctx context.Context, tree string, exclude []string) (*gitcore.Snapshot, error) {
	return h.a.snapshotSandbox(ctx, tree, exclude)
}

func (h undoHost) CheckpointOptions(rec *store.InvocationRecord, reason string) checkpoint.Options {
	return h.a.checkpointOptions(rec, reason)
}

func (h undoHost) RemoveSandboxTree(ctx context.Context, rec *store.InvocationRecord) error {
	return h.a.RemoveSandboxTree(ctx, rec)
}

func (h undoHost) IncludeIntoSandbox(ctx context.Context, wt *store.WorktreeRecord, inv string) error {
	return h.a.includeIntoSandbox(ctx, wt, inv)
}
