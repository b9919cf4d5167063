package agency

import (
	"context"
	"errors"
	"os"
	"syscall"
	"time"

	"github.com/git-agency/git-agency/errs"
	"github.com/git-agency/git-agency/runner"
	"github.com/git-agency/git-agency/store"
)

// StopInvocation asks a running invocation to stop (SIGINT to the runner's
// process group, or C-c in its tmux pane) or kills it (SIGKILL, or
// kill-session). The request is recorded first so the supervisor records
// exit_reason stopped or killed. It returns the record as it stands after
// waiting up to wait for the invocation to end.
func (a *App) StopInvocation(ctx context.Context, query string, kill bool, wait time.Duration) (*store.InvocationRecord, error) {
	rec, err := a.ResolveInvocation(query)
	if err != nil {
		return nil, err
	}
	return a.Stop(ctx, a.Reconcile(ctx, rec), kill, wait)
}

// Stop is StopInvocation for a resolved record.
func (a *App) Stop(ctx context.Context, rec *store.InvocationRecord, kill bool, wait time.Duration) (*store.InvocationRecord, error) {
	if !rec.Active() {
		return nil, errs.New(errs.ENotRunning, "see 'git agency agent show "+rec.InvocationID+"'",
			"invocation %s is not running (status %s)", rec.InvocationID, rec.Status)
	}

	reason := store.ExitStopped
	if kill {
		reason = store.ExitKilled
	}

	rec, err := a.Store.UpdateInvocation(a.LockTimeout, rec.InvocationID, func(r *store.InvocationRecord) error {
		if r.StopRequested != store.ExitKilled {
			r.StopRequested = reason
		}
		return nil
	})
	if err != nil {
		return nil, err
	}

	a.event(rec.InvocationID, reason+"_requested", nil)
	if rec.Mode == store.ModeHeaded {
		if err := a.stopHeaded(ctx, rec, kill); err != nil {
			return nil, err
		}
	} else if err := a.signalRunner(rec, kill); err != nil {
		return nil, err
	}

	return a.waitDone(ctx, rec.InvocationID, wait), nil
}

// signalRunner signals a headless runner's process group. A runner that has
// not started yet sees the recorded request before it starts.
func (a *App) signalRunner(rec *store.InvocationRecord, kill bool) error {
	sig := syscall.SIGINT
	if kill {
		sig = syscall.SIGKILL
	}

	deadline := time.Now().Add(5 * time.Second)
	for {
		if rec.PID != nil {
			if err := runner.SignalGroup(*rec.PID, rec.PIDStartTime, sig); err != nil && !errors.Is(err, os.ErrProcessDone) {
				return errs.Wrap(errs.EIO, err, "", "cannot signal the agent (pid %d)", *rec.PID)
			}
			return nil
		}

		if time.Now().After(deadline) || !rec.Active() {
			return nil
		}

		time.Sleep(50 * time.Millisecond)
		cur, err := a.Store.ReadInvocation(rec.InvocationID)
		if err == nil {
			rec = cur
		}
	}
}

// waitDone polls the record (a file read) until the invocation is no longer
// active or the wait is over, and returns the latest record.
func (a *App) waitDone(ctx context.Context, inv string, wait time.Duration) *store.InvocationRecord {
	deadline := time.Now().Add(wait)
	var rec *store.InvocationRecord
	for {
		r, err := a.Store.ReadInvocation(inv)
		if err == nil {
			rec = a.Reconcile(ctx, r)
			if !rec.Active() {
				return rec
			}
		}

		if time.Now().After(deadline) || ctx.Err() != nil {
			return rec
		}

		time.Sleep(50 * time.Millisecond)
	}
}

// stopAndWait stops a running invocation, gives it grace, then kills it and
// waits for the record to be final (for discard and worktree rm --force).
func (a *App) stopAndWait(ctx context.Context, rec *store.InvocationRecord, grace time.Duration) (*store.InvocationRecord, error) {
	if !rec.Active() {
		return rec, nil
	}

	r, err := a.Stop(ctx, rec, false, grace)
	if err != nil && !errs.Is(err, errs.ENotRunning) {
		return nil, err
	}
	if r != nil && !r.Active() {
		return r, nil
	}

	cur, err := a.Store.ReadInvocation(rec.InvocationID)
	if err != nil {
		return nil, err
	}
	if !cur.Active() {
		return cur, nil
	}

	r, err = a.Stop(ctx, cur, true, 10*time.Second)
	if err != nil && !errs.Is(err, errs.ENotRunning) {
		return nil, err
	}
	if r == nil {
		return a.Store.ReadInvocation(rec.InvocationID)
	}

	return r, nil
}

func sleep50ms() { time.Sleep(50 * time.Millisecond) }
