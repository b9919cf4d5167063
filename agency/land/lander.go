// Package land is landing: the plan (what a sandbox's work becomes on the
// integration branch), the one gate and the commit every land shares,
// verified landing (a candidate checked in a verify tree off the lock),
// many and batched lands, the recovery of an interrupted land, landing
// after an agent's run (autoLand, a red verify sent back), and what land
// would refuse of a pending invocation (landable.go).
//
// agency.App is its only caller: it builds a Lander for each call, with
// the App's core and a Host that answers what landing asks of the rest of
// agency (resolving names, reconcile, sandboxes, includes, the wall, the
// forecast, undo's save). This package never imports agency.
package land

import (
	"time"

	"context"
	"github.com/git-agency/git-agency/runner"
	"io"
	"sync"

	"github.com/git-agency/git-agency/agency/internal/core"
	"github.com/git-agency/git-agency/checkpoint"
	"github.com/git-agency/git-agency/errs"
	"github.com/git-agency/git-agency/store"
)

// Lander lands into one repository: one command's core and the rest of
// agency it asks.
type Lander struct {
	core.Core
	Host Host
	// Notes are the landing notifications waiting for the repo lock to be
	// released (flushNotify); the App keeps them across calls.
	Notes *Notes
}

// Notes are landing notifications waiting for the repo lock to be
// released. Watch lands from its own goroutines, so they are guarded.
type Notes struct {
	mu   sync.Mutex
	list []pendingNote
}

// Len is how many notifications wait.
func (n *Notes) Len() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return len(n.list)
}

// Host is what landing asks of the rest of agency (agency.App answers).
type Host interface {
	// VerifyOnHosts runs a candidate's check on a host of
	// agency.verify.hosts, trying them in turn from the first-th (-1: one
	// picked by inv); the host it ran on, or false when none is set or
	// none answered.
	VerifyOnHosts(ctx context.Context, inv, commit, command string, timeout time.Duration, first int) (runner.VerifyOutcome, string, bool)
	// VerifyHostCount is how many hosts agency.verify.hosts names.
	VerifyHostCount() int
	// ResolveInvocation finds an invocation by id, prefix or name.
	ResolveInvocation(query string) (*store.InvocationRecord, error)
	// ResolveWorktree finds an integration worktree by name or id.
	ResolveWorktree(query string, all bool) (*store.WorktreeEntry, error)
	// WorktreeByID is the integration worktree's record.
	WorktreeByID(id string) (*store.WorktreeRecord, error)
	// CheckOnBranch refuses a worktree tree that is not on its branch.
	CheckOnBranch(ctx context.Context, wt *store.WorktreeRecord) error
	// Reconcile repairs a record whose supervisor died (commands that act).
	Reconcile(ctx context.Context, r *store.InvocationRecord) *store.InvocationRecord
	// View is Reconcile's outcome in memory only (reads).
	View(ctx context.Context, r *store.InvocationRecord) *store.InvocationRecord
	// SendBack sends a follow-up prompt to the invocation's agent.
	SendBack(ctx context.Context, inv, prompt string) error
	// Forecast is the conflict forecast of a pending invocation: whether it
	// lands cleanly, and the other pending invocations it conflicts with
	// (ok false: none known).
	Forecast(ctx context.Context, worktreeID, inv string) (landsCleanly bool, partners []string, ok bool)
	// CheckRefsLogged refuses a branch whose tip its reflog does not
	// account for (E_REF_MOVED).
	CheckRefsLogged(branch, tip string) error
	// DirtyErr is e with what is dirty in tree named.
	DirtyErr(ctx context.Context, tree string, e *errs.Error) *errs.Error
	// RefuseSubmoduleDirt refuses a sandbox whose submodules hold work no
	// commit does.
	RefuseSubmoduleDirt(ctx context.Context, inv, tree string) error
	// CheckpointOptions are the checkpoint options of the invocation.
	CheckpointOptions(rec *store.InvocationRecord, reason string) checkpoint.Options
	// SaveSandbox saves what undo needs to bring the sandbox back.
	SaveSandbox(ctx context.Context, rec *store.InvocationRecord, reason string) (*store.Restore, error)
	// RetireSandboxTree retires a landed sandbox's tree.
	RetireSandboxTree(ctx context.Context, rec *store.InvocationRecord) error
	// SandboxIncludes are the include patterns of a new tree of wt.
	SandboxIncludes(ctx context.Context, wt *store.WorktreeRecord) (core.IncludeSpec, error)
	// IncludeIntoTree copies the included files of source into dst.
	IncludeIntoTree(ctx context.Context, spec core.IncludeSpec, source, dst string, log io.Writer) (*store.IncludeStats, error)
	// AddTree adds a tree of the repository at path.
	AddTree(ctx context.Context, source, path, branch, start string, full bool) (bool, error)
	// PruneOurs prunes the registrations of our trees that are gone.
	PruneOurs(ctx context.Context, also ...string) error
	// MainWorktree is the repository's main worktree.
	MainWorktree(ctx context.Context) string
	// VerifySetup is the setup a new tree at tree runs ("" for none).
	VerifySetup(ctx context.Context, tree string) string
	// Isolation is the wall new invocations (and verifies) get.
	Isolation(ctx context.Context) (string, error)
}
