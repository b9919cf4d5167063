// Package remote is the host side of agency: agents on other machines
// over ssh. The caller's side names and checks hosts, installs there,
// starts, acts on, syncs and fetches from a host's runs (the background
// fetcher), verifies on hosts and shows what they answered; the host's
// side (host-serve) answers hello, start, status, wait, apply and verify
// in its mirror of the caller's repository.
//
// agency.App is its only caller: it builds a Remote for each call, with
// the App's core and a Host that answers what the host side asks of the
// rest of agency (resolving names, statuses, starts, worktrees, landing
// after a run). This package never imports agency.
package remote

import (
	"context"

	"github.com/git-agency/git-agency/agency/internal/core"
	"github.com/git-agency/git-agency/agency/view"
	"github.com/git-agency/git-agency/gitcore"
	"github.com/git-agency/git-agency/store"
)

// Remote works with the hosts of one repository: one command's core and
// the rest of agency it asks.
type Remote struct {
	core.Core
	Agency Host
	// Looks are what the hosts answered this command's views; the App
	// keeps them across calls.
	Looks *Looks
}

// Host is what the host side asks of the rest of agency (agency.App
// answers).
type Host interface {
	// ResolveInvocation finds an invocation by id, prefix or name.
	ResolveInvocation(query string) (*store.InvocationRecord, error)
	// ResolvePresentWorktree finds an integration worktree whose tree is
	// present.
	ResolvePresentWorktree(query string) (*store.WorktreeRecord, error)
	// CheckOnBranch refuses a worktree tree that is not on its branch.
	CheckOnBranch(ctx context.Context, wt *store.WorktreeRecord) error
	// TreeHead is the commit a tree's HEAD is at ("" on an unborn branch).
	TreeHead(ctx context.Context, tree string) (string, error)
	// CreateWorktree makes an integration worktree name off parent.
	CreateWorktree(ctx context.Context, name, parent string, full bool) (*store.WorktreeRecord, error)
	// StartInvocation starts an agent here.
	StartInvocation(ctx context.Context, opts core.StartOptions) (*store.InvocationRecord, error)
	// AfterRun is what a local supervisor runs after an agent's end
	// (autoLand, a red verify sent back).
	AfterRun(ctx context.Context, inv string) error
	// Statuses is the record and display of each of ids from one scan.
	Statuses(ctx context.Context, ids []string) map[string]*view.InvocationView
	// ShowInvocation resolves an invocation and derives its display.
	ShowInvocation(ctx context.Context, query string) (*view.InvocationView, error)
	// SnapshotSandbox is the snapshot tree of a sandbox's uncommitted work.
	SnapshotSandbox(ctx context.Context, tree string, exclude []string) (*gitcore.Snapshot, error)
	// AddTree adds a tree of the repository at path.
	AddTree(ctx context.Context, source, path, branch, start string, full bool) (bool, error)
	// RemoveVerifyTree removes an invocation's verify tree.
	RemoveVerifyTree(ctx context.Context, inv string) error
	// VerifySetup is the setup a new tree at tree runs ("" for none).
	VerifySetup(ctx context.Context, tree string) string
	// VerifyWall is the wall a verify in tree runs behind.
	VerifyWall(ctx context.Context, rec *store.InvocationRecord, tree string) (func(argv []string, dir string) ([]string, error), error)
}

// Opener opens the App of the repository at dir as a Remote: host-serve
// answers in its mirror of the caller's repository.
type Opener func(ctx context.Context, dir string) (*Remote, error)
