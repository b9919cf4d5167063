// Package undo is `git agency undo`: the operation log read and described,
// its newest operation taken back (land, discard, checkpoint apply,
// `worktree rm --force`), each step checked first and finished by the next
// undo after a crash, an operation skipped, and what is saved so an
// operation can be undone (a sandbox's state, SaveSandbox).
//
// agency.App is its only caller: it builds an Undoer for each call, with
// the App's core and a Host that answers what undo asks of the rest of
// agency (worktrees and their marker, sandboxes, reconcile, checkpoints'
// options, snapshots, includes). Landing asks for SaveSandbox through
// land.Host, which the App answers from here. This package never imports
// agency.
package undo

import (
	"context"

	"github.com/git-agency/git-agency/agency/internal/core"
	"github.com/git-agency/git-agency/checkpoint"
	"github.com/git-agency/git-agency/errs"
	"github.com/git-agency/git-agency/gitcore"
	"github.com/git-agency/git-agency/store"
)

// Undoer undoes in one repository: one command's core and the rest of
// agency it asks.
type Undoer struct {
	core.Core
	Host Host
}

// Host is what undo asks of the rest of agency (agency.App answers).
type Host interface {
	// WorktreeByID is the integration worktree's record.
	WorktreeByID(id string) (*store.WorktreeRecord, error)
	// CheckOnBranch refuses a worktree tree that is not on its branch.
	CheckOnBranch(ctx context.Context, wt *store.WorktreeRecord) error
	// WriteMarker writes a tree's integration marker and .agency/.gitignore;
	// WriteAgencyIgnore only the .gitignore.
	WriteMarker(tree string) error
	WriteAgencyIgnore(tree string) error
	// DirtyErr is e with what is dirty in tree named.
	DirtyErr(ctx context.Context, tree string, e *errs.Error) *errs.Error
	// ReconcileLocked repairs a record whose supervisor died; the caller
	// holds the repo lock.
	ReconcileLocked(ctx context.Context, r *store.InvocationRecord) *store.InvocationRecord
	// SandboxPresent refuses an invocation whose sandbox tree is gone.
	SandboxPresent(rec *store.InvocationRecord) error
	// SnapshotSandbox is a snapshot of a sandbox tree's files.
	SnapshotSandbox(ctx context.Context, tree string, exclude []string) (*gitcore.Snapshot, error)
	// CheckpointOptions are the checkpoint options of the invocation.
	CheckpointOptions(rec *store.InvocationRecord, reason string) checkpoint.Options
	// RemoveSandboxTree removes an invocation's sandbox tree.
	RemoveSandboxTree(ctx context.Context, rec *store.InvocationRecord) error
	// IncludeIntoSandbox copies the ignored files wt's include patterns
	// list into the invocation's sandbox.
	IncludeIntoSandbox(ctx context.Context, wt *store.WorktreeRecord, inv string) error
}
