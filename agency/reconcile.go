package agency

import (
	"context"
	"github.com/git-agency/git-agency/agency/internal/core"
	"time"

	"github.com/git-agency/git-agency/errs"
	"github.com/git-agency/git-agency/runner"
	"github.com/git-agency/git-agency/store"
	"github.com/git-agency/git-agency/wall"
)

// startGrace is how long a starting invocation without a recorded
// supervisor is left alone (its start command is still spawning it).
const startGrace = 30 * time.Second

// reconcileLockWait bounds how long a command waits for the lock to repair
// a record on its way to what it was asked to do (core.ReconcileLockWait).
const reconcileLockWait = core.ReconcileLockWait

// Reconcile repairs the record of an invocation whose supervisor died (in
// place of a reaper daemon) and finishes or records a land that was interrupted.
// Only commands that act call it: the mutating commands on the invocation
// they act on, gc (Settle) and queue draining. Reads show the same outcome
// without writing it (View). It is idempotent and takes the lock only when
// there is something to repair. Records never stay running forever: a dead
// supervisor with a gone runner is failed with exit_reason unknown
// (headless), or finished/exited when the tmux session is gone (headed).
// When the repair ends an active invocation its slot is free, so the queue
// is drained under the same lock.
func (a *App) Reconcile(ctx context.Context, r *store.InvocationRecord) *store.InvocationRecord {
	r = a.RecoverLand(ctx, r)
	if !a.needsReconcile(r) {
		return r
	}

	// Never wait long: with the lock busy, go on with the record as it
	// is; whoever holds the lock or the next command repairs it.
	ctx, unlock, err := a.lockWorkWait(ctx, reconcileLockWait)
	if err != nil {
		return r
	}
	defer unlock()
	out := a.reconcileLocked(ctx, r)
	if !out.Active() {
		a.drainQueueLocked(ctx)
	}

	return out
}

// View is r as reads show it: when its supervisor died, the outcome
// reconcile would record (in memory, nothing written, no process
// signalled); otherwise r itself.
func (a *App) View(ctx context.Context, r *store.InvocationRecord) *store.InvocationRecord {
	if !a.needsReconcile(r) {
		return r
	}

	// r was read before its supervisor was found gone: a supervisor writes
	// the run's end, then exits, so read the record again first (an agent
	// start following the run saw "the supervisor is gone" otherwise).
	if cur, err := a.Store.ReadInvocation(r.InvocationID); err == nil && !a.needsReconcile(cur) {
		return cur
	}

	if out, ok := a.reconciled(ctx, r, false); ok {
		return out
	}
	return r
}

func (a *App) needsReconcile(r *store.InvocationRecord) bool {
	if !r.Active() || r.Host != "" {
		return false
	}
	if runner.AlivePtr(r.SupervisorPID, r.SupervisorStartTime) {
		return false
	}

	if r.SupervisorPID == nil && r.Status == store.StatusStarting {
		if t, err := time.Parse(time.RFC3339, r.StartedAt); err == nil && a.Now().Sub(t) < startGrace {
			return false
		}
	}

	return true
}

// reconciled is the record reconcile writes for cur, whose supervisor is
// gone (a copy; cur is not changed), and false when there is nothing to
// write (its agent still runs). It looks at /proc and, for a headed run,
// tmux; it writes no record. clean (reconcile, not a read) also captures
// a dead pane's screen and removes its session.
func (a *App) reconciled(ctx context.Context, cur *store.InvocationRecord, clean bool) (*store.InvocationRecord, bool) {
	var code *int
	finished, reason := store.StatusFailed, store.ExitUnknown
	if cur.Mode == store.ModeHeaded {
		running, c := a.headedState(ctx, cur, clean)
		if running {
			return cur, false
		}

		code = c
		finished, reason = store.StatusFinished, store.ExitExited
		if code != nil && *code != 0 {
			finished = store.StatusFailed
		}
	} else if runner.AlivePtr(cur.PID, cur.PIDStartTime) {
		// The supervisor died but the agent still runs: it is running.
		return cur, false
	}

	// As the supervisor would have recorded it: a kill is a failure, a stop
	// the user asked for ended the run as asked (finished, stopped).
	switch cur.StopRequested {
	case store.ExitKilled:
		reason, finished = store.ExitKilled, store.StatusFailed
	case store.ExitStopped:
		reason, finished = store.ExitStopped, store.StatusFinished
	}

	out := *cur
	out.Status = finished
	out.ExitReason = store.Str(reason)
	out.ExitCode = code
	out.FinishedAt = store.Str(a.now())
	if out.LandingStatus == nil {
		out.LandingStatus = store.Str(store.LandingPending)
	}

	if t := a.Store.LastOutput(cur.InvocationID); !t.IsZero() {
		out.LastOutputAt = store.Str(t.UTC().Format(time.RFC3339))
	}

	if out.Error == "" {
		out.Error = errs.SupervisorGone(cur.Isolation == wall.IsolateBwrap && cur.Mode != store.ModeHeaded)
	}

	return &out, true
}

// reconcileLocked is Reconcile for a caller holding the lock. Without it,
// it repairs nothing (and says so).
func (a *App) reconcileLocked(ctx context.Context, r *store.InvocationRecord) *store.InvocationRecord {
	if err := a.Store.RequireLock("reconcile"); err != nil {
		a.warn(r.InvocationID, err)
		return r
	}

	cur, err := a.Store.ReadInvocation(r.InvocationID)
	if err != nil {
		return r
	}
	if !a.needsReconcile(cur) {
		return cur
	}

	out, ok := a.reconciled(ctx, cur, true)
	if !ok {
		return cur
	}

	// What the agent left behind outside its group (setsid children) may
	// still write into the sandbox: stop it before the record says ended.
	if stopped, _ := runner.StopLeftovers(cur.InvocationID, a.Store.SandboxTreePath(cur.InvocationID), runner.LeftoverGrace); len(stopped) > 0 {
		a.event(cur.InvocationID, "leftovers_stopped", map[string]any{"pids": runner.Pids(stopped), "by": "reconcile"})
	}

	if err := a.Store.WriteInvocation(out); err != nil {
		// Shown as it was; the next command that acts tries again.
		a.warn(cur.InvocationID, err)
		return r
	}

	a.event(cur.InvocationID, "reconciled", map[string]any{"status": out.Status, "exit_reason": store.Deref(out.ExitReason)})
	return out
}

// Settle is the acting that reads leave alone, in one place: every
// invocation whose supervisor died gets its outcome recorded (leftover
// processes stopped first), interrupted lands are finished or recorded, and
// queued invocations take the free slots. gc runs it; so, piece by piece,
// do the supervisor whose agent ends (the queue), every start (the queue)
// and every command that acts on one invocation (Reconcile).
func (a *App) Settle(ctx context.Context) {
	list, err := a.Store.ScanInvocations()
	if err != nil {
		return
	}

	for _, e := range list {
		if e.Record != nil && (a.needsReconcile(e.Record) || e.Record.Land != nil && e.Record.Land.State == LandInProgress) {
			a.Reconcile(ctx, e.Record)
		}
	}

	a.drainQueue(ctx, a.LockTimeout)
}
