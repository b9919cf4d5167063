// Package watch is `git agency watch`: a bubbletea view of the integration
// worktrees of one repository with their invocations nested under them.
//
// The model is plain data. Everything slow (reading records, reconcile, git,
// tmux) happens in a Loader or an Actions method, both run inside tea.Cmds;
// View and Update never do I/O.
package watch

import (
	"context"
	"time"

	"github.com/git-agency/git-agency/internal/subproc"
)

// Display statuses of an invocation: what agent ls, show and watch show
// (docs/running-agents.md, "Status").
const (
	StatusActive     = "active"
	StatusStalled    = "stalled"
	StatusNeedsInput = "needs input"
	StatusReady      = "ready to land"
	// StatusReadyApply: ready to land, its work uncommitted in the sandbox
	// (only a land with --apply takes it: A, or L on such a row).
	StatusReadyApply = "ready to land (--apply)"
	// The latest check of a pending invocation's candidate (agency.verify)
	// failed, is running, was cancelled or could not run: not ready.
	StatusVerifyFailed    = "verify failed"
	StatusVerifying       = "verifying"
	StatusVerifyCancelled = "verify cancelled"
	StatusVerifyError     = "verify error"
	StatusStopped         = "stopped"
	StatusLanded          = "landed"
	StatusDiscarded       = "discarded"
	StatusFailed          = "failed"
	StatusBroken          = "broken"
	// StatusWorktreeRemoved: ended, never landed, and its worktree was
	// removed: it can only be inspected or discarded (neither active nor
	// ready).
	StatusWorktreeRemoved = "worktree removed"
)

// Snapshot is everything the view shows, read in one go.
type Snapshot struct {
	Worktrees []WorktreeRow
	// Taken is when the snapshot was read (ages are relative to it).
	Taken time.Time
	// Warning is a non-fatal problem of the load (shown in the status line).
	Warning string
}

// WorktreeRow is one integration worktree and its invocations.
type WorktreeRow struct {
	ID     string
	Name   string // "" for a broken record
	Branch string
	// State is "present", "archived", "missing" (tree directory gone),
	// "broken" (unreadable record) or "orphaned" (the group of invocations
	// whose worktree record is unknown).
	State       string
	Path        string
	Invocations []InvocationRow
	// RepoID, RepoName and RepoPath name the repository (watch
	// --all-repos only).
	RepoID, RepoName, RepoPath string
}

// StateRepoGone is the state of the one row of a repository that is no
// longer where its records say (watch --all-repos).
const StateRepoGone = "repository gone"

// InvocationRow is one invocation as displayed.
type InvocationRow struct {
	ID         string
	ShortID    string
	WorktreeID string
	Runner     string
	Mode       string // headed, headless
	// Host is the host it runs on ("" for this machine).
	Host       string
	Status     string // lifecycle: starting, running, finished, failed ("" when broken)
	StartedAt  time.Time
	FinishedAt time.Time
	// Display is the derived display status (Status* constants).
	Display string
	// Apply: its work is uncommitted, so only a land with --apply takes it
	// (its Display may be a verify status instead of StatusReadyApply).
	Apply bool
	// Summary is a one-line note (semantic summary, exit reason, error).
	Summary     string
	SandboxPath string
	TmuxSession string
	// ConflictsWith and ConflictFiles are the conflict forecast of a
	// pending invocation: "integration" or the short ids of the others it
	// would conflict with when landed after them, and the files.
	ConflictsWith []string
	ConflictFiles []string
	// LandRefused is the error code land refuses it with (forecast).
	LandRefused string
	// QueuePlace is a queued invocation's place in the queue (1: next).
	QueuePlace int
	// Usage is the conversation's account in short ("2 turns · $0.0004"):
	// shown once there was a follow-up or a cost; "" otherwise.
	Usage string
	// RepoID is the repository's id (watch --all-repos only).
	RepoID string
}

// Age is the time the age column counts from: finish if finished, else start.
func (r InvocationRow) Age() time.Time {
	if !r.FinishedAt.IsZero() {
		return r.FinishedAt
	}
	return r.StartedAt
}

// Counts summarises a worktree's invocations.
type Counts struct{ Active, Ready, NeedsInput int }

// Counts of a worktree: active (starting, active or stalled), ready to land, needing
// input.
func (w WorktreeRow) Counts() Counts {
	var c Counts
	for _, inv := range w.Invocations {
		switch inv.Display {
		case StatusActive, StatusStalled, StatusStarting:
			c.Active++
		case StatusReady, StatusReadyApply:
			c.Ready++
		case StatusNeedsInput:
			c.NeedsInput++
		}
	}

	return c
}

// Loader reads a fresh snapshot: records, reconcile, derived status. It runs
// in a tea.Cmd, never in Update or View.
type Loader func(ctx context.Context) (Snapshot, error)

// Actions are what the keys do. The model calls them from tea.Cmds. The
// exec-style ones return a command that the TUI runs with tea.Exec
// (suspending itself until it exits); the others return a one-line result
// for the status line, or an error shown there.
type Actions interface {
	Attach(ctx context.Context, inv InvocationRow) (*subproc.Terminal, error)
	Open(ctx context.Context, wt WorktreeRow) (*subproc.Terminal, error)
	Shell(ctx context.Context, wt WorktreeRow) (*subproc.Terminal, error)
	Diff(ctx context.Context, inv InvocationRow) (string, error)
	Logs(ctx context.Context, inv InvocationRow) (string, error)
	VerifyLog(ctx context.Context, inv InvocationRow) (string, error)
	Land(ctx context.Context, inv InvocationRow) (string, error)
	// ApplyStat is what a land --apply would take: the diffstat of the
	// sandbox's uncommitted work (and its commits, counted), one line each.
	ApplyStat(ctx context.Context, inv InvocationRow) ([]string, error)
	// LandApply lands with --apply: its commits and its uncommitted work.
	LandApply(ctx context.Context, inv InvocationRow) (string, error)
	Discard(ctx context.Context, inv InvocationRow) (string, error)
	Stop(ctx context.Context, inv InvocationRow) (string, error)
	Kill(ctx context.Context, inv InvocationRow) (string, error)
}
