package agency

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"syscall"

	"github.com/git-agency/git-agency/errs"
	"github.com/git-agency/git-agency/runner"
)

// supervisorGCPercent is the supervisor's GOGC: its heap may grow by half
// of what is live before a collection, not double. (A tight memory limit
// instead made it collect without end and answer its runner's exit late.)
const supervisorGCPercent = 50

// FPSuperviseLogWrite makes every log write of the supervisor fail with
// ENOSPC (a full disk under a running agent).
const FPSuperviseLogWrite = "supervise:log-write"

// FPSuperviseDiskFull, given as "supervise:disk-full=<file>", makes every
// write of the supervisor that needs new space in the data directory (log
// writes, record writes, events) fail with ENOSPC while <file> exists: a
// disk that fills up under a running agent, and is freed again.
const FPSuperviseDiskFull = "supervise:disk-full"

// diskFullFault is the supervisor's log write fault under
// FPSuperviseLogWrite or FPSuperviseDiskFull (which also fails the
// store's writes), nil without them.
func (a *App) diskFullFault() func() error {
	enospc := &os.PathError{Op: "write", Path: "log", Err: syscall.ENOSPC}
	if file, ok := strings.CutPrefix(a.Getenv("AGENCY_FAILPOINT"), FPSuperviseDiskFull+"="); ok {
		fault := func() error {
			if _, err := os.Stat(file); err == nil {
				return enospc
			}
			return nil
		}
		a.Store.WriteFault = func(string) error { return fault() }
		return fault
	}

	if a.Failpoint == nil {
		return nil
	}

	return func() error {
		if a.fail(FPSuperviseLogWrite) != nil {
			return enospc
		}
		return nil
	}
}

// Supervise is the body of the hidden `supervise <inv>` process that
// StartInvocation spawns: it runs the invocation's runner under a
// runner.Supervisor until it ends, writing the supervisor's own log to log.
// report, when not nil, is the pipe the start that spawned it waits on to
// learn whether the agent's wall came up (runner.Supervisor.WallReport).
func (a *App) Supervise(ctx context.Context, inv string, log io.Writer, report *os.File) error {
	// One supervisor runs beside every agent, for hours: keep its heap
	// small (the walk that sets up a large tree's file watches leaves
	// megabytes of garbage) rather than let it double before each GC.
	debug.SetGCPercent(supervisorGCPercent)
	rec, err := a.readRecord(inv)
	if err != nil {
		return err
	}

	spec, err := runner.Lookup(a.Config, rec.Runner)
	if err != nil {
		spec = runner.Spec{Name: rec.Runner}
	}

	s := &runner.Supervisor{Repo: a.Repo, Store: a.Store, Config: a.Config, Invocation: inv,
		LockTimeout: a.LockTimeout, Spec: spec, Log: log, WallReport: report}
	s.LogWriteFault = a.diskFullFault()

	// The supervisor is in its own session; a stray SIGINT must not kill
	// it. Notify, not Ignore: an ignored signal would be inherited by the
	// runner, which then could not be stopped.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT)
	defer signal.Stop(sigs)
	err = s.Run(ctx)

	// This agent's slot is free: the oldest queued invocation takes it.
	a.drainQueue(context.WithoutCancel(ctx), a.LockTimeout)

	// With agency.autoLand (or a red verify sent back to the agent), the
	// finished invocation is verified and landed now.
	if aerr := a.AfterRun(context.WithoutCancel(ctx), inv); aerr != nil {
		fmt.Fprintf(log, "after the run: %s\n", errs.As(aerr).Msg)
	}

	return err
}
