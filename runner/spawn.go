package runner

import (
	"os"
	"os/exec"
	"path/filepath"
	"syscall"

	"github.com/git-agency/git-agency/errs"
	"github.com/git-agency/git-agency/internal/subproc"
	"github.com/git-agency/git-agency/store"
)

// SelfExe is the program the supervisor (and the hooks that report to it)
// is started as: this binary, found the way the user's shell or git found
// it.
func SelfExe() string {
	arg0 := os.Args[0]
	if filepath.Base(arg0) != arg0 {
		if abs, err := filepath.Abs(arg0); err == nil {
			return abs
		}
	}
	if p, err := exec.LookPath(arg0); err == nil {
		if abs, err := filepath.Abs(p); err == nil {
			return abs
		}
	}

	p, _ := os.Executable()
	return p
}

// AgencyProgram is the program whose hidden commands (supervise,
// hook-event) the supervisor and the claude hooks run.
const AgencyProgram = "git-agency"

// AgencyExe is the git-agency program, whichever of our programs asks
// (git-agency-watch drains the queue too): this program when it is
// git-agency, else the git-agency installed beside it, else the one on
// PATH; "" when there is none. No other program has those hidden
// commands, so none may be started in its place.
func AgencyExe() string {
	return agencyExeFor(SelfExe(), exec.LookPath)
}

// agencyExeFor is AgencyExe for the program self, looking names up on PATH
// with lookPath.
func agencyExeFor(self string, lookPath func(string) (string, error)) string {
	if self != "" {
		if filepath.Base(self) == AgencyProgram {
			return self
		}
		beside := filepath.Join(filepath.Dir(self), AgencyProgram)
		if fi, err := os.Stat(beside); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return beside
		}
	}

	if p, err := lookPath(AgencyProgram); err == nil {
		if abs, err := filepath.Abs(p); err == nil {
			return abs
		}
	}

	return ""
}

// Spawned is a supervisor process just started by SpawnSupervisor.
type Spawned struct {
	cmd *exec.Cmd
}

// Pid is the supervisor's process id.
func (s *Spawned) Pid() int { return s.cmd.Process.Pid }

// Abort kills the supervisor and reaps it (the caller could not record
// it). The process is our child, just started, so the kill cannot miss;
// Wait's status is the kill's own.
func (s *Spawned) Abort() {
	s.cmd.Process.Kill()
	s.cmd.Wait()
}

// Release reaps the supervisor in the background if the caller lives long
// enough; it runs in its own session and outlives the caller otherwise.
func (s *Spawned) Release() { go s.cmd.Wait() }

// SpawnSupervisor starts `git-agency supervise <inv>` (AgencyExe) in dir,
// in its own session (setsid), stdin from /dev/null, stdout and stderr
// appended to logPath (created 0600). env is its environment; nil: ours
// (a queued invocation passes the one its `agent start --queue` kept).
// report, when not nil, is the write end of a pipe the supervisor tells
// whether its agent's wall came up (WallReportFlag, Supervisor.WallReport).
// It returns once the process has started.
func SpawnSupervisor(inv, dir, logPath string, env []string, report *os.File) (*Spawned, error) {
	exe := AgencyExe()
	if exe == "" {
		return nil, errs.AgencyMissing(AgencyProgram)
	}

	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, errs.IO("create", logPath, err)
	}
	defer logf.Close()
	devnull, err := os.Open(os.DevNull)
	if err != nil {
		return nil, errs.IO("open", os.DevNull, err)
	}
	defer devnull.Close()
	cmd := exec.Command(exe, "supervise", inv)
	if report != nil {
		cmd.Args = []string{exe, "supervise", WallReportFlag, inv}
		cmd.ExtraFiles = []*os.File{report}
	}
	cmd.Dir = dir
	cmd.Env = env
	cmd.Stdin, cmd.Stdout, cmd.Stderr = devnull, logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	traced := subproc.Trace(cmd)

	if err := cmd.Start(); err != nil {
		return nil, errs.Wrap(errs.EInternal, err, "", "cannot start the supervisor")
	}

	traced()
	return &Spawned{cmd: cmd}, nil
}

// RemoveRetiredCmd is the hidden first argument of the git-agency process
// SpawnRemover starts: `git-agency remove-retired <dir>`.
const RemoveRetiredCmd = "remove-retired"

// SpawnRemover starts `git-agency remove-retired <dir>` (AgencyExe) in its
// own session with no terminal and does not wait for it: it deletes the
// retired trees in dir (store.RemoveRetired) after the caller is gone.
// lock, when not nil, is dir's flock, which the caller took: the remover
// inherits it and holds it until it ends, so the entries never look
// abandoned in between. Without it the remover waits for the lock (another
// remover is at work). dataDir is told to it ($AGENCY_DATA_DIR): it
// empties no retired directory outside it. An error means nothing was
// started.
func SpawnRemover(dataDir, dir string, lock *os.File) error {
	exe := AgencyExe()
	if exe == "" {
		return errs.AgencyMissing(AgencyProgram)
	}

	devnull, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		return errs.IO("open", os.DevNull, err)
	}
	defer devnull.Close()
	args := []string{RemoveRetiredCmd, dir}
	cmd := exec.Command(exe, args...)
	if lock != nil {
		cmd.Args = append(cmd.Args, "--locked")
		cmd.ExtraFiles = []*os.File{lock}
	}

	cmd.Dir = "/"
	cmd.Env = append(os.Environ(), "AGENCY_DATA_DIR="+dataDir)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = devnull, devnull, devnull
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	traced := subproc.Trace(cmd)

	if err := cmd.Start(); err != nil {
		return errs.Wrap(errs.EInternal, err, "", "cannot start the remover of retired trees")
	}

	traced()
	go cmd.Wait()
	return nil
}

// RemoveRetired is the remover process (args: the retired directory, then
// --locked when it inherited the lock as its fd 3): it takes the lock
// unless it has it, deletes the retired trees and exits 0, or 1 on an
// error (what it left, doctor reports and gc removes). The directory must
// lie in the data directory $AGENCY_DATA_DIR names (or the default one).
func RemoveRetired(args []string) int {
	if len(args) == 0 || len(args) > 2 || (len(args) == 2 && args[1] != "--locked") {
		return 2
	}

	dir := args[0]
	dataDir, err := store.DataDir(os.Getenv, "")
	if err != nil || store.CheckInside(dataDir, dir) != nil {
		return 1
	}

	if len(args) == 1 {
		f, _, err := store.LockRetired(dir, true)
		if err != nil {
			return 1
		}
		defer f.Close()
	}

	if store.RemoveRetired(dataDir, dir) != nil {
		return 1
	}

	return 0
}

// hostFetchCmd is the hidden command of the process SpawnHostFetcher
// starts: `git-agency host-fetch <host>`.
const hostFetchCmd = "host-fetch"

// SpawnHostFetcher starts `git-agency host-fetch <name>` (AgencyExe) in
// the repository dir, in its own session with no terminal, its output
// appended to logPath, and does not wait for it: it fetches the host's
// work in the background (agency.RunHostFetcher) after the caller is gone.
func SpawnHostFetcher(dir, name, logPath string) error {
	exe := AgencyExe()
	if exe == "" {
		return errs.AgencyMissing(AgencyProgram)
	}

	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return errs.IO("create", logPath, err)
	}
	defer logf.Close()
	devnull, err := os.Open(os.DevNull)
	if err != nil {
		return errs.IO("open", os.DevNull, err)
	}
	defer devnull.Close()
	cmd := exec.Command(exe, hostFetchCmd, name)
	cmd.Dir = dir
	cmd.Stdin, cmd.Stdout, cmd.Stderr = devnull, logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	traced := subproc.Trace(cmd)

	if err := cmd.Start(); err != nil {
		return errs.Wrap(errs.EInternal, err, "", "cannot start the fetcher of host %s", name)
	}

	traced()
	go cmd.Wait()
	return nil
}
