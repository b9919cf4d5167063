package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/git-agency/git-agency/gitcore"
	"github.com/git-agency/git-agency/internal/subproc"
	"github.com/git-agency/git-agency/store"
	"github.com/git-agency/git-agency/wall"
)

// stopGrace is how long a stopped runner gets between SIGINT and SIGKILL.
const stopGrace = 5 * time.Second

// Supervisor owns one invocation from its start to its final record.
type Supervisor struct {
	Repo        *gitcore.Repo
	Store       *store.Store
	Config      *gitcore.Config
	Invocation  string
	LockTimeout time.Duration
	// Spec is the runner (for timeouts and the stream format).
	Spec Spec
	// Log is the supervisor's own log (supervisor.log).
	Log io.Writer
	// LogWriteFault, when set, is asked before every log write and makes
	// the write fail with its error (tests: a full disk).
	LogWriteFault func() error

	// logFailure is the first failed log write ("" none); logRecorded
	// whether the record says so yet.
	logMu       sync.Mutex
	logFailure  string
	logRecorded bool
	logTried    time.Time

	lastOutput  atomic.Int64 // unix nanos of the last chunk
	timedOut    atomic.Bool
	timeoutNote atomic.Pointer[string] // which limit stopped the run

	// stopAtExit is the stop request the record held when the runner
	// exited (exitNoted: it was read).
	stopAtExit string
	exitNoted  bool

	// notifyWG counts the notify commands still running; waiting is
	// whether the invocation was last seen needing input.
	notifyWG sync.WaitGroup
	waiting  bool

	// WallReport, when not nil, is the pipe the start that spawned this
	// supervisor waits on, holding the lock, to learn whether the agent's
	// wall came up (reportWall); reportMu guards it.
	WallReport *os.File
	reportMu   sync.Mutex
}

// noteExit reads the stop request as it stands when the runner has exited.
func (s *Supervisor) noteExit() {
	if cur, err := s.Store.ReadInvocation(s.Invocation); err == nil {
		s.stopAtExit, s.exitNoted = cur.StopRequested, true
	}
}

func (s *Supervisor) logf(format string, args ...any) {
	if s.Log != nil {
		fmt.Fprintf(s.Log, "%s %s\n", time.Now().UTC().Format(time.RFC3339Nano), fmt.Sprintf(format, args...))
	}
}

func (s *Supervisor) update(fn func(*store.InvocationRecord) error) (*store.InvocationRecord, error) {
	s.reportWall("")
	rec, err := s.Store.UpdateInvocation(s.LockTimeout, s.Invocation, fn)
	if err != nil {
		s.logf("update record: %v", err)
	}
	return rec, err
}

func (s *Supervisor) event(name string, data map[string]any) {
	if err := s.Store.AppendEvent(s.Invocation, name, data); err != nil {
		s.logf("event %s: %v", name, err)
	}
}

func now() string { return time.Now().UTC().Format(time.RFC3339) }

// Run supervises the invocation until its runner has exited and the record
// is final. It never runs a runner anywhere but the invocation's own
// sandbox tree, and refuses a tree holding the integration marker.
func (s *Supervisor) Run(ctx context.Context) error {
	rec, err := s.begin()
	if err != nil {
		return err
	}

	// Room for how the run ends, taken now (see recordEnd).
	if err := s.Store.ReserveOutcome(s.Invocation, rec.Turns); err != nil {
		s.logf("%v", err)
	}

	want := s.Store.SandboxTreePath(s.Invocation)
	if filepath.Clean(rec.SandboxPath) != filepath.Clean(want) {
		return s.failEarly(fmt.Sprintf("sandbox path %s is not the invocation's sandbox %s; refusing to run", rec.SandboxPath, want), store.ExitUnknown)
	}
	if _, err := os.Lstat(store.MarkerPath(rec.SandboxPath)); err == nil {
		return s.failEarly("the sandbox holds an integration marker; refusing to run a runner in an integration tree", store.ExitUnknown)
	}
	if fi, err := os.Stat(rec.SandboxPath); err != nil || !fi.IsDir() {
		return s.failEarly("the sandbox tree is missing; refusing to run", store.ExitUnknown)
	}

	// agent start put the setup to run (agency.setup, or an approved
	// project setup) in the record.
	setup := rec.SetupScript
	if setup == "" && rec.SetupSource == "" {
		setup, _ = s.Config.Get("agency.setup")
	}

	// A follow-up turn (agent send) runs in a sandbox that was set up for
	// the first one.
	if setup != "" && rec.Turns <= 1 {
		if !s.runSetup(ctx, rec, setup) {
			return nil
		}
	}
	if rec.Mode == store.ModeHeaded {
		return runHeaded(ctx, s, rec)
	}

	return s.runHeadless(ctx, rec)
}

// begin records the supervisor in the invocation's record, and returns
// the record. A start that waits for the wall's report (WallReport) holds
// the lock and recorded this process already: the record is only read.
func (s *Supervisor) begin() (*store.InvocationRecord, error) {
	if s.reporting() {
		return s.Store.ReadInvocation(s.Invocation)
	}

	pid := os.Getpid()
	st := StartTimeOf(pid)
	return s.update(func(r *store.InvocationRecord) error {
		r.SupervisorPID = &pid
		r.SupervisorStartTime = st
		return nil
	})
}

// failEarly ends an invocation whose runner never started.
func (s *Supervisor) failEarly(msg, reason string) error {
	s.logf("%s", msg)
	s.event("start_failed", map[string]any{"reason": msg})
	_, err := s.update(func(r *store.InvocationRecord) error {
		r.Status = store.StatusFailed
		r.Error = msg
		r.ExitReason = store.Str(reason)
		r.FinishedAt = store.Str(now())
		if r.LandingStatus == nil {
			r.LandingStatus = store.Str(store.LandingPending)
		}
		return nil
	})
	s.notifyEnd()
	if err != nil {
		return err
	}

	return errors.New(msg)
}

// agentEnv is the environment of a runner or setup script: the user's,
// scrubbed as for every child (subproc.Scrub), plus AGENCY_*.
func agentEnv(rec *store.InvocationRecord) []string {
	return subproc.Scrub(os.Environ(), nil,
		"AGENCY_INVOCATION_ID="+rec.InvocationID,
		"AGENCY_WORKTREE_ID="+rec.IntegrationWorktreeID,
		"AGENCY_SANDBOX="+rec.SandboxPath,
	)
}

// SetupEnv is what Cursor and Codex give their setup scripts, so a
// project's declared setup finds the same variables here: the user's own
// checkout (the main worktree) as ROOT_WORKTREE_PATH and
// CODEX_SOURCE_TREE_PATH, the new sandbox as CODEX_WORKTREE_PATH.
func SetupEnv(root, sandbox string) []string {
	return []string{
		"ROOT_WORKTREE_PATH=" + root,
		"CODEX_SOURCE_TREE_PATH=" + root,
		"CODEX_WORKTREE_PATH=" + sandbox,
	}
}

// runSetup runs agency.setup in the sandbox; it reports whether the runner
// may start. A failure fails the invocation and keeps the sandbox.
func (s *Supervisor) runSetup(ctx context.Context, rec *store.InvocationRecord, script string) bool {
	logPath := filepath.Join(s.Store.SandboxLogsDir(s.Invocation), "setup.log")
	s.update(func(r *store.InvocationRecord) error { r.SetupStatus = "running"; return nil })
	s.event("setup_started", map[string]any{"command": script})
	f, err := store.OpenLog(logPath, os.O_APPEND)
	var logStart int64
	if fi, serr := os.Stat(logPath); serr == nil {
		logStart = fi.Size()
	}

	code := -1
	stopped := ""
	argv, werr := s.walled(rec, []string{"/bin/sh", "-c", script})
	if werr != nil && err == nil {
		f.Close()
		err = werr
	}

	if err == nil {
		cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
		cmd.Dir = rec.SandboxPath
		cmd.Env = append(agentEnv(rec), SetupEnv(s.Repo.Toplevel, rec.SandboxPath)...)
		cmd.Stdout, cmd.Stderr = f, f
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}

		// A cancelled supervisor ends the whole setup, the script's
		// children too (its own group, as the agent), and waits boundedly.
		cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
		cmd.WaitDelay = stopGrace
		traced := subproc.Trace(cmd)
		if err = cmd.Start(); err == nil {
			// A stop or kill asked for during setup ends the setup: the
			// request is in the record (the agent has no pid yet).
			done := make(chan struct{})
			asked := make(chan string, 1)
			go func() {
				pid := cmd.Process.Pid
				st := StartTimeOf(pid)
				t := time.NewTicker(100 * time.Millisecond)
				defer t.Stop()

				for {
					select {
					case <-done:
						return
					case <-t.C:
					}

					if cur, err := s.Store.ReadInvocation(s.Invocation); err == nil && cur.StopRequested != "" {
						asked <- cur.StopRequested
						if cur.StopRequested == store.ExitKilled {
							SignalGroup(pid, st, syscall.SIGKILL)
						} else {
							SignalGroup(pid, st, syscall.SIGTERM)
							go func() {
								time.Sleep(stopGrace)
								SignalGroup(pid, st, syscall.SIGKILL)
							}()
						}

						return
					}
				}
			}()
			err = cmd.Wait()
			traced()
			close(done)

			if ctx.Err() != nil {
				killGroupRemains(cmd.Process.Pid)
			}

			select {
			case stopped = <-asked:
			default:
			}
		}

		f.Close()

		if cmd.ProcessState != nil {
			code = cmd.ProcessState.ExitCode()
		}
	}

	if err == nil {
		s.update(func(r *store.InvocationRecord) error {
			r.SetupStatus = "succeeded"
			r.SetupExitCode = store.Int(0)
			return nil
		})
		s.event("setup_finished", map[string]any{"exit_code": 0})
		return true
	}

	msg := fmt.Sprintf("setup failed (exit %d): see %s; the sandbox is kept for inspection", code, logPath)
	if stopped != "" {
		msg = "stopped during setup; see " + logPath
	} else if rec.Isolation == wall.IsolateBwrap {
		if hint := wallSetupHint(logPath, logStart, rec.SandboxPath); hint != "" {
			msg += "; " + hint
		}
	}

	s.logf("%s: %v", msg, err)
	s.event("setup_failed", map[string]any{"exit_code": code, "log": logPath})
	s.update(func(r *store.InvocationRecord) error {
		r.SetupStatus = "failed"
		r.SetupExitCode = store.Int(code)
		r.Status = store.StatusFailed
		r.Error = msg
		r.ExitReason = store.Str(store.ExitSetupFailed)
		if stopped != "" {
			r.ExitReason = store.Str(stopped)
			r.Error = "stopped during setup"
		}

		r.FinishedAt = store.Str(now())
		if r.LandingStatus == nil {
			r.LandingStatus = store.Str(store.LandingPending)
		}

		return nil
	})
	s.notifyEnd()
	return false
}

// OutputHook receives every stdout chunk of a headless runner after it was
// written to raw.jsonl (the stream parser, newStreamHook), every stderr
// chunk after stderr.log through Stderr's writer, and is closed at the end.
type OutputHook interface {
	io.Writer
	Stderr() io.Writer
	Close(rec *store.InvocationRecord)
}

// BackgroundTask runs beside the runner (the checkpointer, newCheckpointTask):
// Start is called once the runner runs; Stop after it exited, before the
// final record is written.
type BackgroundTask interface {
	Start(ctx context.Context)
	Stop(ctx context.Context)
}

func (s *Supervisor) startTasks(ctx context.Context, rec *store.InvocationRecord) (stop func()) {
	var tasks []BackgroundTask
	if rec.Isolation == wall.IsolateBwrap {
		// Stopped first: its import in progress ends before the final
		// checkpoint's import begins.
		tasks = append(tasks, newImportTask(s, rec))
	}

	tasks = append(tasks, newCheckpointTask(s, rec))
	tctx, cancel := context.WithCancel(ctx)
	for _, t := range tasks {
		t.Start(tctx)
	}

	return func() {
		cancel()
		for _, t := range tasks {
			t.Stop(context.Background())
		}
	}
}

// timeoutWhy says which limit a run that began then, with its last output
// at last, has passed ("" for none).
func (s *Supervisor) timeoutWhy(began, last time.Time) string {
	if s.Spec.Timeout > 0 && time.Since(began) > s.Spec.Timeout {
		return "timeout " + s.Spec.Timeout.String()
	}
	if s.Spec.IdleTimeout > 0 && time.Since(last) > s.Spec.IdleTimeout {
		return "no output for " + s.Spec.IdleTimeout.String()
	}
	return ""
}

// timeoutFired records that a limit was passed.
func (s *Supervisor) timeoutFired(why string) {
	s.timeoutNote.Store(&why)
	s.timedOut.Store(true)
	s.logf("stopping the runner: %s", why)
	s.event("timeout", map[string]any{"reason": why})
}

// timeoutReason says which limit stopped the run, "" if none did.
func (s *Supervisor) timeoutReason() string {
	if p := s.timeoutNote.Load(); p != nil {
		return *p
	}
	return ""
}

// LeftoverGrace is how long processes an agent left behind get between
// SIGTERM and SIGKILL.
const LeftoverGrace = 2 * time.Second

// stopLeftovers stops what the agent left outside its process group (a
// child that called setsid: see StopLeftovers) once it ended, before the
// final checkpoint, so nothing writes into the sandbox after it; the event
// says which were stopped.
func (s *Supervisor) stopLeftovers(rec *store.InvocationRecord) {
	stopped, alive := StopLeftovers(s.Invocation, rec.SandboxPath, LeftoverGrace)
	if rec.Isolation == wall.IsolateBwrap {
		// the pids cgroups of walls that are over (see wall.ProcLimitBase)
		wall.SweepProcLimits(wall.ProcLimitBase())
	}
	if len(stopped) == 0 {
		return
	}
	s.logf("the agent left %d process(es) outside its group; stopped them", len(stopped))
	s.event("leftovers_stopped", map[string]any{"pids": Pids(stopped), "still_alive": Pids(alive)})
}

// Pids are the pids of procs.
func Pids(procs []Proc) []int {
	out := []int{}
	for _, p := range procs {
		out = append(out, p.PID)
	}
	return out
}

// Finish writes the final record: status, exit code and reason (a user's
// stop or kill request, or a timeout, wins over what the exit looked like),
// finished_at, landing_status = pending, last_output_at.
func (s *Supervisor) finish(code int, reason string) error {
	return s.finishWith(store.Int(code), reason)
}

// finishWith is finish for an exit code that may be unknown (nil: a headed
// session that vanished).
//
// The exited event is appended before the run's end is written anywhere a
// reader looks (the outcome file, then the record): once an invocation
// reads as ended, its end event is there (land --all orders agents that
// ended within one second by it).
func (s *Supervisor) finishWith(code *int, reason string) error {
	s.logMu.Lock()
	s.recordLogFailureLocked()
	incomplete := s.logFailure
	s.logMu.Unlock()

	if !s.exitNoted {
		s.noteExit()
	}

	final := s.endReason(reason, s.stopAtExit)
	data := map[string]any{"exit_code": nil, "exit_reason": final}
	if code != nil {
		data["exit_code"] = *code
	}

	s.event("exited", data)

	// Never lost: see recordEnd.
	err := s.recordEnd(func(r *store.InvocationRecord) error {
		if incomplete != "" {
			r.LogsIncomplete = incomplete
		}

		// A stop asked for after the runner had exited on its own (during
		// the final checkpoint) does not change how it ended.
		stop := r.StopRequested
		if s.exitNoted {
			stop = s.stopAtExit
		}

		why := s.endReason(reason, stop)
		r.Status = store.StatusFinished

		// Killed or timed out, a run did not complete, whatever its exit
		// code (claude exits 0 on SIGINT; a killed tmux session has
		// none). A stop the user asked for ended it as asked: finished,
		// exit_reason stopped, whatever its exit code (130 after C-c).
		if why == store.ExitTimeout || stop == store.ExitKilled ||
			(stop == "" && code != nil && *code != 0) {
			r.Status = store.StatusFailed
		}
		if r.Status == store.StatusFailed && r.SemanticSummary == "" {
			// Nothing in its stream says why: its last words on stderr do.
			r.SemanticSummary = s.lastStderrLine()
		}

		r.ExitCode = code
		r.ExitReason = store.Str(why)
		r.FinishedAt = store.Str(now())
		if r.LandingStatus == nil {
			r.LandingStatus = store.Str(store.LandingPending)
		}
		if t := s.Store.LastOutput(s.Invocation); !t.IsZero() {
			r.LastOutputAt = store.Str(t.UTC().Format(time.RFC3339))
		}

		return nil
	})
	s.logf("runner exited: code %v, reason %s", data["exit_code"], final)
	s.notifyEnd()
	return err
}

// endReason is how a run ended: a timeout, or the user's stop or kill
// request (stop), wins over what the exit looked like (reason).
func (s *Supervisor) endReason(reason, stop string) string {
	switch {
	case s.timedOut.Load():
		return store.ExitTimeout
	case stop == store.ExitKilled:
		return store.ExitKilled
	case stop == store.ExitStopped:
		// Even when the stop had to escalate to SIGKILL.
		return store.ExitStopped
	}
	return reason
}

// notifyEnd runs the notify command for the final record (finished or
// failed) and waits for every notify command still running.
func (s *Supervisor) notifyEnd() {
	if rec, err := s.Store.ReadInvocation(s.Invocation); err == nil {
		switch rec.Status {
		case store.StatusFinished:
			s.notify(NotifyFinished, s.endDisplay(rec), endSummary(rec))
		case store.StatusFailed:
			s.notify(NotifyFailed, "failed", endSummary(rec))
		}
	}
	s.waitNotify()
}

// endSummary is a final record's one-line summary for a notification.
func endSummary(r *store.InvocationRecord) string {
	if r.SemanticSummary != "" {
		return r.SemanticSummary
	}
	if r.Error != "" {
		return r.Error
	}
	s := "exit_reason " + store.Deref(r.ExitReason)
	if r.ExitCode != nil {
		s += fmt.Sprintf(", exit %d", *r.ExitCode)
	}
	return s
}
