package agency

import (
	"context"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/git-agency/git-agency/runner"
)

// FPSuperviseLogWrite makes every log write of the supervisor fail with
// ENOSPC (a full disk under a running agent).
const FPSuperviseLogWrite = "supervise:log-write"

// Supervise is the body of the hidden `supervise <inv>` process that
// StartInvocation spawns: it runs the invocation's runner under a
// runner.Supervisor until it ends, writing the supervisor's own log to log.
func (a *App) Supervise(ctx context.Context, inv string, log io.Writer) error {
	rec, err := a.readRecord(inv)
	if err != nil {
		return err
	}
	spec, err := runner.Lookup(a.Config, rec.Runner)
	if err != nil {
		spec = runner.Spec{Name: rec.Runner}
	}
	s := &runner.Supervisor{Repo: a.Repo, Store: a.Store, Config: a.Config, Invocation: inv,
		LockTimeout: a.LockTimeout, Spec: spec, Log: log}
	if a.Failpoint != nil {
		s.LogWriteFault = func() error {
			if a.fail(FPSuperviseLogWrite) != nil {
				return &os.PathError{Op: "write", Path: "log", Err: syscall.ENOSPC}
			}
			return nil
		}
	}
	// The supervisor is in its own session; a stray SIGINT must not kill
	// it. Notify, not Ignore: an ignored signal would be inherited by the
	// runner, which then could not be stopped.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT)
	defer signal.Stop(sigs)
	err = s.Run(ctx)
	// This agent's slot is free: the oldest queued invocation takes it.
	a.DrainQueue(context.WithoutCancel(ctx), a.LockTimeout)
	return err
}
