package runner

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/git-agency/git-agency/internal/subproc"
	"github.com/git-agency/git-agency/store"
)

// chunkWriter appends every chunk to a file as it arrives (never batched)
// and notes the time of the last output.
type chunkWriter struct {
	f    *os.File
	s    *Supervisor
	hook io.Writer
}

func (w *chunkWriter) Write(p []byte) (int, error) {
	var err error
	if w.s.LogWriteFault != nil {
		err = w.s.LogWriteFault()
	}
	if err == nil {
		_, err = w.f.Write(p)
	}

	w.s.lastOutput.Store(time.Now().UnixNano())

	if w.hook != nil {
		w.hook.Write(p)
	}
	if err != nil {
		// The agent goes on (a failed write must not kill it through a
		// broken pipe); the record says at once that the logs miss output.
		w.s.logWriteFailed(filepath.Base(w.f.Name()), err)
	}

	return len(p), nil
}

// logWriteFailed notes the first failed log write and records it in the
// record (logs_incomplete) and as an event as soon as it can: on a full
// disk the record write may fail too, so it is tried again on later
// failures (at most once a second) and at the end.
func (s *Supervisor) logWriteFailed(name string, err error) {
	s.logMu.Lock()
	defer s.logMu.Unlock()
	if s.logFailure == "" {
		s.logFailure = fmt.Sprintf("writing logs/%s failed at %s: %v; output after that is missing from the logs", name, now(), err)
		s.logf("log write failed: %v", err)
	}
	if s.logRecorded || time.Since(s.logTried) < time.Second {
		return
	}
	s.recordLogFailureLocked()
}

// recordLogFailureLocked writes the noted log failure into the record (the
// caller holds logMu).
func (s *Supervisor) recordLogFailureLocked() {
	if s.logFailure == "" || s.logRecorded {
		return
	}
	s.logTried = time.Now()
	msg := s.logFailure
	if _, err := s.update(func(r *store.InvocationRecord) error { r.LogsIncomplete = msg; return nil }); err == nil {
		s.logRecorded = true
		s.event("log_write_failed", map[string]any{"error": msg})
	} else {
		s.notePending(msg, err)
	}
}

func (s *Supervisor) runHeadless(ctx context.Context, rec *store.InvocationRecord) error {
	logs := s.Store.SandboxLogsDir(s.Invocation)
	if err := os.MkdirAll(logs, 0o700); err != nil {
		return s.failEarly("cannot create logs: "+err.Error(), store.ExitUnknown)
	}

	open := func(name string) (*os.File, error) {
		return store.OpenLog(filepath.Join(logs, name), os.O_APPEND)
	}
	rawF, err := open("raw.jsonl")
	if err != nil {
		return s.failEarly("cannot open raw.jsonl: "+err.Error(), store.ExitUnknown)
	}
	defer rawF.Close()
	errF, err := open("stderr.log")
	if err != nil {
		return s.failEarly("cannot open stderr.log: "+err.Error(), store.ExitUnknown)
	}
	defer errF.Close()

	if len(rec.Command) == 0 {
		return s.failEarly("the record has no command", store.ExitUnknown)
	}

	devnull, err := os.Open(os.DevNull)
	if err != nil {
		return s.failEarly(err.Error(), store.ExitUnknown)
	}
	defer devnull.Close()

	argv, ready, readyW, err := s.headlessArgv(rec)
	if err != nil {
		return s.failEarly(err.Error(), store.ExitUnknown)
	}

	hook := newStreamHook(s, rec)
	cmd := exec.Command(argv[0], argv[1:]...)
	if readyW != nil {
		cmd.ExtraFiles = []*os.File{readyW}
	}

	cmd.Dir = rec.SandboxPath
	cmd.Env = agentEnv(rec)
	cmd.Stdin = devnull
	out := &chunkWriter{f: rawF, s: s}
	errOut := &chunkWriter{f: errF, s: s}
	if hook != nil {
		out.hook, errOut.hook = hook, hook.Stderr()
	}

	cmd.Stdout = out
	cmd.Stderr = errOut
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}

	// A descendant that survives the runner (one that ignored SIGINT, or a
	// background job) keeps stdout open: without a bound, Wait would wait
	// for it forever and the record would stay running.
	cmd.WaitDelay = stopGrace
	s.lastOutput.Store(time.Now().UnixNano())

	if cur, err := s.Store.ReadInvocation(s.Invocation); err == nil && cur.StopRequested != "" {
		return s.failEarly("stopped before the runner started", cur.StopRequested)
	}

	traced := subproc.Trace(cmd)
	err = cmd.Start()

	if readyW != nil {
		readyW.Close()
	}
	if err != nil {
		return s.failEarly(fmt.Sprintf("cannot start %s: %v", rec.Command[0], err), store.ExitUnknown)
	}

	if err := s.awaitWall(cmd, ready, errF.Name()); err != nil {
		return err
	}
	rpid := cmd.Process.Pid
	rstart := StartTimeOf(rpid)
	s.update(func(r *store.InvocationRecord) error {
		r.Status = store.StatusRunning
		r.PID = &rpid
		r.PIDStartTime = rstart
		return nil
	})
	s.event("started", map[string]any{"pid": rpid, "command": rec.Command, "mode": store.ModeHeadless})
	s.logf("runner started: pid %d: %q in %s", rpid, rec.Command, rec.SandboxPath)

	stopTasks := s.startTasks(ctx, rec)
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); s.watchdog(rpid, rstart, done) }()
	go func() { defer wg.Done(); s.followWaiting(rec.SandboxPath, done) }()

	// Forward a SIGTERM of the supervisor to the runner group.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGHUP)
	go func() {
		select {
		case <-sigs:
			s.logf("supervisor got a signal: stopping the runner")
			s.stopGroup(rpid, rstart)
		case <-done:
		}
	}()
	waitErr := cmd.Wait()
	traced()
	close(done)
	wg.Wait()
	signal.Stop(sigs)

	code, reason := exitStatus(cmd.ProcessState, waitErr)
	s.noteExit()

	if s.timedOut.Load() {
		// The runner is gone; what is left of its group goes too.
		killGroupRemains(rpid)
	} else if groupAlive(rpid) {
		// Background children the agent left would go on writing into
		// the sandbox after its last checkpoint, and under a land.
		s.logf("the agent left processes behind; stopping them")
		s.event("leftovers_stopped", map[string]any{"pgid": rpid})
		syscall.Kill(-rpid, syscall.SIGTERM)
		deadline := time.Now().Add(2 * time.Second)
		for groupAlive(rpid) && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
		}

		killGroupRemains(rpid)
	}

	s.stopLeftovers(rec)
	stopTasks()

	if hook != nil {
		cur, _ := s.Store.ReadInvocation(s.Invocation)
		if cur == nil {
			cur = rec
		}
		hook.Close(cur)
	}

	return s.finish(code, reason)
}

// watchdog enforces the wall-clock and idle timeouts.
func (s *Supervisor) watchdog(pid int, start *uint64, done <-chan struct{}) {
	if s.Spec.Timeout <= 0 && s.Spec.IdleTimeout <= 0 {
		return
	}

	began := time.Now()
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()

	for {
		select {
		case <-done:
			return
		case <-tick.C:
		}

		why := s.timeoutWhy(began, time.Unix(0, s.lastOutput.Load()))
		if why == "" {
			continue
		}

		s.timeoutFired(why)
		go s.stopGroup(pid, start)
		<-done
		return
	}
}

// stopGroup sends SIGINT to the runner's group, then SIGKILL after the
// grace to whatever of the group is still there (the runner itself, or
// descendants that outlived it).
func (s *Supervisor) stopGroup(pid int, start *uint64) {
	if SignalGroup(pid, start, syscall.SIGINT) != nil {
		return
	}

	deadline := time.Now().Add(stopGrace)
	for time.Now().Before(deadline) {
		if !Alive(pid, start) && !groupAlive(pid) {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}

	if SignalGroup(pid, start, syscall.SIGKILL) != nil {
		killGroupRemains(pid)
	}
}

// groupAlive reports whether process group pgid still has members that
// are not zombies. The runner's pid cannot be reused while its group
// exists.
func groupAlive(pgid int) bool {
	return pgid > 0 && syscall.Kill(-pgid, 0) == nil && groupHasLive(pgid)
}

// killGroupRemains kills what is left of the runner's group once the
// runner itself was reaped.
func killGroupRemains(pgid int) {
	if groupAlive(pgid) {
		syscall.Kill(-pgid, syscall.SIGKILL)
	}
}

// exitStatus maps a process state to (exit code, reason). A signal death
// is 128+signal; SIGKILL is "killed", SIGINT/SIGTERM "stopped".
func exitStatus(ps *os.ProcessState, err error) (int, string) {
	if ps == nil {
		return -1, store.ExitUnknown
	}

	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		sig := ws.Signal()
		reason := store.ExitExited
		switch sig {
		case syscall.SIGKILL:
			reason = store.ExitKilled
		case syscall.SIGINT, syscall.SIGTERM:
			reason = store.ExitStopped
		}

		return 128 + int(sig), reason
	}

	return ps.ExitCode(), store.ExitExited
}
