package agency

import (
	"context"
	"time"

	"github.com/git-agency/git-agency/runner"
	"github.com/git-agency/git-agency/store"
)

// startGrace is how long a starting invocation without a recorded
// supervisor is left alone (its start command is still spawning it).
const startGrace = 30 * time.Second

// reconcileLockWait bounds how long a read waits for the lock to repair a
// record.
const reconcileLockWait = 300 * time.Millisecond

// Reconcile repairs the record of an invocation whose supervisor died, in
// place of a reaper daemon: it runs lazily on every read path, is idempotent,
// and takes the lock only when there is something to repair. Records never
// stay running forever: a dead supervisor with a gone runner is failed with
// exit_reason unknown (headless), or finished/exited when the tmux session
// is gone (headed).
func (a *App) Reconcile(ctx context.Context, r *store.InvocationRecord) *store.InvocationRecord {
	r = a.RecoverLand(ctx, r)
	if !a.needsReconcile(r) {
		return r
	}
	// A read path never waits long: with the lock busy, show the record
	// as it is and repair it next time.
	ctx, unlock, err := a.lockWorkWait(ctx, reconcileLockWait)
	if err != nil {
		return r
	}
	defer unlock()
	return a.reconcileLocked(ctx, r)
}

func (a *App) needsReconcile(r *store.InvocationRecord) bool {
	if !Active(r) {
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
	var code *int
	finished, reason := store.StatusFailed, store.ExitUnknown
	if cur.Mode == store.ModeHeaded {
		running, c := a.headedState(ctx, cur)
		if running {
			return cur
		}
		code = c
		finished, reason = store.StatusFinished, store.ExitExited
		if code != nil && *code != 0 {
			finished = store.StatusFailed
		}
	} else if runner.AlivePtr(cur.PID, cur.PIDStartTime) {
		// The supervisor died but the agent still runs: it is running.
		return cur
	}
	// What the agent left behind outside its group (setsid children) may
	// still write into the sandbox: stop it before the record says ended.
	if stopped, _ := runner.StopLeftovers(cur.InvocationID, a.Store.SandboxTreePath(cur.InvocationID), runner.LeftoverGrace); len(stopped) > 0 {
		a.event(cur.InvocationID, "leftovers_stopped", map[string]any{"pids": runner.Pids(stopped), "by": "reconcile"})
	}
	switch cur.StopRequested {
	case store.ExitKilled, store.ExitStopped:
		reason = cur.StopRequested
		finished = store.StatusFailed
	}
	cur.Status = finished
	cur.ExitReason = store.Str(reason)
	cur.ExitCode = code
	cur.FinishedAt = store.Str(a.now())
	if cur.LandingStatus == nil {
		cur.LandingStatus = store.Str(store.LandingPending)
	}
	if t := a.Store.LastOutput(cur.InvocationID); !t.IsZero() {
		cur.LastOutputAt = store.Str(t.UTC().Format(time.RFC3339))
	}
	if cur.Error == "" {
		cur.Error = "the supervisor is gone; the outcome was reconstructed"
	}
	if err := a.Store.WriteInvocation(cur); err != nil {
		// Shown as it was; the next read tries again.
		a.warn(cur.InvocationID, err)
		return r
	}
	a.event(cur.InvocationID, "reconciled", map[string]any{"status": cur.Status, "exit_reason": reason})
	return cur
}
