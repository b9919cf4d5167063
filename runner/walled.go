package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/git-agency/git-agency/errs"

	"github.com/git-agency/git-agency/store"
	"github.com/git-agency/git-agency/wall"
)

// walled is argv as the invocation runs it: inside its wall when the
// record says it is walled, else unchanged.
func (s *Supervisor) walled(rec *store.InvocationRecord, argv []string) ([]string, error) {
	w, err := s.wallOf(rec)
	if w == nil || err != nil {
		return argv, err
	}
	return w.Command(argv), nil
}

// walledInPane is walled for a headed agent: it keeps its pane as its
// controlling terminal (a session of its own would lose the resizes its
// screen follows). Its pane runs nothing but the agent, so what it could
// push into the pane's input (TIOCSTI) only it reads.
func (s *Supervisor) walledInPane(rec *store.InvocationRecord, argv []string) ([]string, error) {
	w, err := s.wallOf(rec)
	if w == nil || err != nil {
		return argv, err
	}
	w.NoTerminal = false
	return w.Command(argv), nil
}

// wallOf is the invocation's wall, nil when it runs unwalled.
func (s *Supervisor) wallOf(rec *store.InvocationRecord) (*wall.Wall, error) {
	w, err := wall.OfRecord(s.Store, s.Repo.CommonDir, s.Config, rec, SelfExe())
	if err != nil {
		return nil, err
	}
	return w, wall.Prepare(context.Background(), s.Store, s.Repo, w, rec.InvocationID)
}

// readyWait bounds how long a walled headless agent may take to start.
const readyWait = 30 * time.Second

// headlessArgv is the headless runner's argv; walled, with a pipe the
// agent's process writes a byte to once its signals are its own (see
// wall.Exec): the caller gives cmd the returned write end as its first
// extra file, and waits with awaitReady.
func (s *Supervisor) headlessArgv(rec *store.InvocationRecord) (argv []string, ready, readyW *os.File, err error) {
	w, err := s.wallOf(rec)
	if w == nil || err != nil {
		return rec.Command, nil, nil, err
	}
	ready, readyW, err = os.Pipe()
	if err != nil {
		return nil, nil, nil, err
	}
	w.ReadyFD = 3
	return w.Command(rec.Command), ready, readyW, nil
}

// awaitReady waits for the walled agent's byte (or the end of the wall,
// or readyWait), then closes the pipe: up when the byte came, ended when
// the wall ended without it (nothing of the agent ran).
func awaitReady(ready *os.File) (up, ended bool) {
	if ready == nil {
		return false, false
	}
	ready.SetReadDeadline(time.Now().Add(readyWait))
	n, err := ready.Read(make([]byte, 1))
	ready.Close()
	return n == 1, n == 0 && errors.Is(err, io.EOF)
}

// WallReportFlag makes `supervise` tell the start that spawned it whether
// its agent's wall came up, on descriptor 3 (Supervisor.WallReport).
const WallReportFlag = "--wall-report"

// WallUp and WallFail begin the lines a supervisor writes to WallReport:
// "up", or "fail " and bubblewrap's own message.
const (
	WallUp   = "up"
	WallFail = "fail "
)

// reportWall tells the start waiting on WallReport what became of the
// agent's wall (msg: WallUp, WallFail…; "" tells nothing), once: the pipe
// is closed after. update calls it first, so a start that holds the lock
// never waits on a supervisor that waits for that lock.
func (s *Supervisor) reportWall(msg string) {
	s.reportMu.Lock()
	defer s.reportMu.Unlock()
	if s.WallReport == nil {
		return
	}
	if msg != "" {
		s.WallReport.Write([]byte(msg + "\n"))
	}
	s.WallReport.Close()
	s.WallReport = nil
}

// reporting is whether a start waits on WallReport.
func (s *Supervisor) reporting() bool {
	s.reportMu.Lock()
	defer s.reportMu.Unlock()
	return s.WallReport != nil
}

// awaitWall waits for a walled headless agent's wall to come up
// (awaitReady) and tells the start that waits (reportWall). A wall that
// ended without its agent, while a start waits, ends the run here: the
// start is told bubblewrap's message (the first line of errLog, where
// its stderr went), and removes the invocation or runs it unwalled with
// a supervisor of its own, ending this one first. Only a start that is
// gone (killed) leaves this one to record the failure.
func (s *Supervisor) awaitWall(cmd *exec.Cmd, ready *os.File, errLog string) error {
	reporting := s.reporting()
	up, ended := awaitReady(ready)
	if !ended || !reporting {
		if up {
			s.reportWall(WallUp)
		}
		s.reportWall("")
		return nil
	}

	cmd.Wait()
	msg := firstLogLine(errLog)
	if msg == "" {
		msg = fmt.Sprintf("bubblewrap ended (%s)", cmd.ProcessState)
	}
	s.reportWall(WallFail + msg)
	if l, err := s.Store.Lock(s.LockTimeout); err == nil {
		l.Unlock()
	}

	return s.failEarly(errs.WallNotUp(msg), store.ExitUnknown)
}

// firstLogLine is the first line of the log at path ("" when there is none).
func firstLogLine(path string) string {
	f, err := store.ReadLog(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	b, _ := io.ReadAll(io.LimitReader(f, 4096))
	line, _, _ := strings.Cut(strings.TrimSpace(string(b)), "\n")
	return line
}
