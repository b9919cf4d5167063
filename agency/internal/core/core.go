// Package core is what agency's packages share: one command's repository,
// store and configuration with its seams (clock, failpoints, warnings), the
// repo lock with its deadline, and the small helpers every use case calls.
// agency builds one from its App for each call into a package of its own
// (land, view, tidy, remote), so that package never imports agency.
package core

import (
	"context"
	"errors"
	"os"
	"time"

	"github.com/git-agency/git-agency/errs"
	"github.com/git-agency/git-agency/gitcore"
	"github.com/git-agency/git-agency/runner"
	"github.com/git-agency/git-agency/store"
)

// Core is the part of agency.App every use case needs, copied from it.
type Core struct {
	Repo   *gitcore.Repo
	Store  *store.Store
	Config *gitcore.Config
	// Getenv reads the environment (tests replace it).
	Getenv func(string) string
	// Now is the clock.
	Now func() time.Time
	// LockTimeout bounds the wait for the repo lock.
	LockTimeout time.Duration
	// Failpoint, when it returns an error for a named step, makes that step
	// fail (agency.App.Failpoint).
	Failpoint func(step string) error
	// Warn, when set, is told what went wrong without failing the command
	// (agency.App.Warn).
	Warn func(error)
}

// Fail reports an injected failure at step, if any.
func (c *Core) Fail(step string) error {
	if c.Failpoint == nil {
		return nil
	}
	return c.Failpoint(step)
}

// LockedWorkTimeout bounds the work done under the repo lock: every
// subprocess run with the context LockWork returns is ended by then, so a
// hung hook or tmux server cannot hold every other command off for ever.
const LockedWorkTimeout = 10 * time.Minute

// LockWork takes the repo lock (waiting up to c.LockTimeout) and returns the
// context to do the locked work with (ctx, bounded by LockedWorkTimeout)
// and the function that ends it (cancel and unlock).
func (c *Core) LockWork(ctx context.Context) (context.Context, func(), error) {
	return c.LockWorkWait(ctx, c.LockTimeout)
}

// LockWorkWait is LockWork waiting up to wait for the lock.
func (c *Core) LockWorkWait(ctx context.Context, wait time.Duration) (context.Context, func(), error) {
	lock, err := c.Store.LockContext(ctx, wait)
	if err != nil {
		return ctx, func() {}, err
	}
	ctx, cancel := context.WithTimeout(ctx, LockedWorkTimeout)
	return ctx, func() { cancel(); lock.Unlock() }, nil
}

// Warning reports what went wrong without failing the command, so that it
// is never silent: into the invocation's supervisor.log (when inv is not "")
// and to c.Warn. A supervisor.log that cannot be written is said to c.Warn
// too.
func (c *Core) Warning(inv string, err error) {
	if inv != "" {
		if lerr := c.Store.AppendSupervisorLog(inv, "warning: "+errs.As(err).Msg); lerr != nil {
			err = errors.Join(err, lerr)
		}
	}
	if c.Warn != nil {
		c.Warn(err)
	}
}

// Event appends an event to the invocation's events.jsonl. A failure is
// warned about, not returned: the record, written before the event, is
// what counts, and the command did what it says.
func (c *Core) Event(inv, name string, data map[string]any) {
	if err := c.Store.AppendEvent(inv, name, data); err != nil {
		c.Warning(inv, errs.EventNotRecorded(inv, name, err))
	}
}

// Stamp is the current time in RFC3339, UTC.
func (c *Core) Stamp() string { return c.Now().UTC().Format(time.RFC3339) }

// GitErr turns a *gitcore.GitError into an E_GIT error; other errors pass.
func GitErr(err error) error {
	if err == nil {
		return nil
	}
	if ge := (*gitcore.GitError)(nil); errors.As(err, &ge) {
		e := errs.Git(ge.Args, ge.ExitCode, ge.Stderr)
		e.Err = ge
		return e
	}
	return err
}

// cleanupTimeout bounds the cleanup after a failure.
const cleanupTimeout = time.Minute

// CleanupCtx is the context to undo a failed step with: ctx's values
// without its cancellation (the failure may have been ctx's own end: a
// deadline, Ctrl-C), with a deadline of its own.
func CleanupCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
}

// WithCleanup is err with what the cleanup after it could not undo (nil:
// err as it is).
func WithCleanup(err, cleanupErr error) error {
	return errs.CleanupFailed(GitErr(err), cleanupErr)
}

// SandboxBranchMissingErr is the refusal for an invocation whose sandbox
// branch is gone.
func SandboxBranchMissingErr(rec *store.InvocationRecord) error {
	return errs.SandboxBranchMissing(rec.InvocationID, rec.SandboxBranch)
}

// IncludeSpec is what a new tree gets copied into it: the
// .worktreeinclude patterns and the trees they are looked up in.
type IncludeSpec struct {
	Patterns []string
	Sources  []string
}

// IncludeFile is the file at a repository's root that lists, in gitignore
// syntax, the ignored files to copy into every new tree.
const IncludeFile = ".worktreeinclude"

// SetupConfigKey is the user's own setup; it needs no approval.
const SetupConfigKey = "agency.setup"

// AgencyExe is the program walled work runs as (its wall-exec): the
// git-agency installed with whatever program the user ran (git-agency,
// git-sandbox, git-agency-watch), never a second program asked to act as
// the first; the running one only when there is no git-agency at all.
func AgencyExe() string {
	if p := runner.AgencyExe(); p != "" {
		return p
	}
	return runner.SelfExe()
}

// SandboxTree returns the invocation's sandbox tree path when it exists.
func (c *Core) SandboxTree(rec *store.InvocationRecord) string {
	tree := c.Store.SandboxTreePath(rec.InvocationID)
	if _, err := os.Stat(tree); err != nil {
		return ""
	}
	return tree
}

// NewestOutput is the newest of t (the logs' newest modification time),
// the record's last_output_at and its turn_started_at: a follow-up turn
// counts from its start, not from the last turn's output.
func NewestOutput(r *store.InvocationRecord, t time.Time) time.Time {
	for _, v := range []*string{r.LastOutputAt, &r.TurnStartedAt} {
		if v != nil {
			if rt, err := time.Parse(time.RFC3339, *v); err == nil && rt.After(t) {
				t = rt
			}
		}
	}
	return t
}

// ReconcileLockWait bounds how long a command waits for the lock to repair
// a record on its way to what it was asked to do (the host side, too, when
// it records what a host's runs did).
const ReconcileLockWait = 300 * time.Millisecond
