package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"syscall"
	"time"

	"github.com/git-agency/git-agency/internal/subproc"
	"github.com/git-agency/git-agency/store"
)

// verifyLogLimit bounds a verify log: its first half and its last half are
// kept, what lies between is left out with a note saying how much.
const verifyLogLimit = 1 << 20

// VerifySpec is one verify: an optional setup script, then the check
// (agency.verify), each run by /bin/sh in the verify tree Dir.
type VerifySpec struct {
	Dir     string
	Setup   string
	Command string
	// Env is added to the scrubbed environment of both.
	Env []string
	// Timeout bounds setup and check together (0: none).
	Timeout time.Duration
	// LogPath receives setup's and the check's output, bounded by
	// verifyLogLimit.
	LogPath string
	// Argv, when set, turns the shell command line into the argv that runs
	// it (a wall around the verify tree); nil runs it as it is.
	Argv func(argv []string, dir string) ([]string, error)
}

// VerifyOutcome is how a verify ended. Passed only when the setup (if
// any) and the check exited 0 in time.
type VerifyOutcome struct {
	Passed bool
	// Status is store's passed, failed (the check said no), cancelled
	// (Ctrl-C, the timeout) or error (it could not run: not found, not
	// executable, no wall, no log).
	Status string
	// ExitCode is the failing step's exit status (nil when it had none:
	// timed out, could not start).
	ExitCode *int
	// Error says, for a failure, what failed in a sentence.
	Error    string
	Duration time.Duration
}

// RunVerify runs a verify (setup then check) and waits for it. Each step
// runs in its own process group, stdin /dev/null, output to the bounded
// log; a step past the timeout, or a cancelled ctx, has its whole group
// killed.
func RunVerify(ctx context.Context, spec VerifySpec) (out VerifyOutcome) {
	began := time.Now()
	// Named result: the duration is set on what is returned.
	defer func() { out.Duration = time.Since(began) }()
	f, err := store.OpenLog(spec.LogPath, os.O_TRUNC)
	if err != nil {
		out.Status, out.Error = store.VerifyErrored, "could not write the verify log: "+err.Error()
		return out
	}

	log := newBoundedLog(f, verifyLogLimit)
	defer log.Close()

	if spec.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, spec.Timeout)
		defer cancel()
	}

	steps := []struct{ what, script string }{{"setup", spec.Setup}, {"verify", spec.Command}}
	for _, st := range steps {
		if st.script == "" {
			continue
		}

		fmt.Fprintf(log, "$ %s\n", st.script)
		code, err := runVerifyStep(ctx, spec, st.script, log)
		out = stepOutcome(ctx, spec, st.what, code, err)
		if out.Error != "" {
			fmt.Fprintf(log, "\n[%s]\n", out.Error)
			return out
		}
	}

	zero := 0
	out.Passed, out.Status, out.ExitCode = true, store.VerifyPassed, &zero
	return out
}

// stepOutcome judges how one step ended: "" Error when it passed.
func stepOutcome(ctx context.Context, spec VerifySpec, what string, code int, err error) VerifyOutcome {
	out := VerifyOutcome{Status: store.VerifyFailed}
	if code >= 0 && err == nil {
		out.ExitCode = &code
	}

	switch {
	case ctx.Err() == context.DeadlineExceeded:
		out.Status, out.ExitCode = store.VerifyCancelled, nil
		out.Error = fmt.Sprintf("%s timed out after %s", what, spec.Timeout)
	case ctx.Err() != nil || code == 130 || code == codeInterrupted:
		out.Status, out.ExitCode = store.VerifyCancelled, nil
		out.Error = what + " was cancelled"
	case err != nil:
		out.Status, out.Error = store.VerifyErrored, fmt.Sprintf("%s could not start: %v", what, err)
	case code == 126:
		out.Status, out.Error = store.VerifyErrored, what+" command not executable (exit 126)"
	case code == 127:
		out.Status, out.Error = store.VerifyErrored, what+" command not found (exit 127)"
	case code != 0:
		out.Error = fmt.Sprintf("%s failed (exit %d)", what, code)
	}

	return out
}

// codeInterrupted is runVerifyStep's code for a step ended by SIGINT or
// SIGTERM (a Ctrl-C that reached it).
const codeInterrupted = -2

// runVerifyStep runs one script; err is a start failure, code its exit
// status (-1 when it has none).
func runVerifyStep(ctx context.Context, spec VerifySpec, script string, log io.Writer) (int, error) {
	argv := []string{"/bin/sh", "-c", script}
	if spec.Argv != nil {
		var err error
		if argv, err = spec.Argv(argv, spec.Dir); err != nil {
			return -1, err
		}
	}

	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = spec.Dir
	cmd.Env = subproc.Scrub(os.Environ(), nil, spec.Env...)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = verifySysProcAttr()
	traced := subproc.Trace(cmd)
	defer traced()

	if err := cmd.Start(); err != nil {
		return -1, err
	}

	pgid := cmd.Process.Pid
	done := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
			syscall.Kill(-pgid, syscall.SIGKILL)
		case <-done:
		}
	}()
	err := cmd.Wait()
	close(done)

	// Whatever the check left behind in its group goes with it.
	killGroupRemains(pgid)

	if cmd.ProcessState == nil {
		return -1, err
	}

	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		return -1, err
	}
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() &&
		(ws.Signal() == syscall.SIGINT || ws.Signal() == syscall.SIGTERM) {
		return codeInterrupted, nil
	}

	return cmd.ProcessState.ExitCode(), nil
}

// boundedLog writes the first limit/2 bytes through to the file, then
// keeps only the latest limit/2 bytes in memory; Close appends those after
// a note of how many bytes were left out.
type boundedLog struct {
	f       *os.File
	head    int64
	written int64
	tail    []byte
	tailMax int
	dropped int64
}

func newBoundedLog(f *os.File, limit int64) *boundedLog {
	return &boundedLog{f: f, head: limit / 2, tailMax: int(limit / 2)}
}

func (b *boundedLog) Write(p []byte) (int, error) {
	n := len(p)

	if room := b.head - b.written; room > 0 {
		k := min(int64(len(p)), room)
		b.f.Write(p[:k])
		b.written += k
		p = p[k:]
	}

	if len(p) == 0 {
		return n, nil
	}

	b.tail = append(b.tail, p...)
	if over := len(b.tail) - b.tailMax; over > 0 {
		b.dropped += int64(over)
		b.tail = append(b.tail[:0], b.tail[over:]...)
	}

	return n, nil
}

// Close writes the kept tail and closes the file.
func (b *boundedLog) Close() error {
	if b.dropped > 0 {
		fmt.Fprintf(b.f, "\n[... %d bytes of output left out ...]\n", b.dropped)
	}
	b.f.Write(b.tail)
	return b.f.Close()
}
