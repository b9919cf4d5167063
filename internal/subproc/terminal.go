package subproc

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"syscall"
)

// Terminal is a program the user drives from their own terminal: an
// editor, a shell, a pager, `tmux attach`, the watch program. It is the one
// path by which cli and watch start such a program (they never import
// os/exec): started traced like every child, with the environment its
// maker chose. It satisfies bubbletea's ExecCommand, so the TUI can hand
// it the terminal with tea.Exec.
type Terminal struct {
	cmd *exec.Cmd
}

// NewTerminal makes argv (argv[0] a path or a name on PATH) run in dir
// (""= ours) with env (nil = ours, inherited as is), wired to this
// process's stdin, stdout and stderr until the Set… methods say otherwise.
func NewTerminal(argv []string, dir string, env []string) *Terminal {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = env
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	return &Terminal{cmd: cmd}
}

// ShellTerminal runs script with /bin/sh -c, args as its $0, $1, … (as git
// runs core.editor and core.pager: the user's string goes through the
// shell, a path is passed as an argument, never interpolated).
func ShellTerminal(script string, dir string, env []string, args ...string) *Terminal {
	return NewTerminal(append([]string{"/bin/sh", "-c", script}, args...), dir, env)
}

// Args is the command line, program first.
func (t *Terminal) Args() []string { return t.cmd.Args }

// Dir is the directory the program starts in ("" = ours).
func (t *Terminal) Dir() string { return t.cmd.Dir }

// Env is the program's environment (nil = ours).
func (t *Terminal) Env() []string { return t.cmd.Env }

// SetStdio rewires all three streams.
func (t *Terminal) SetStdio(in io.Reader, out, errw io.Writer) {
	t.cmd.Stdin, t.cmd.Stdout, t.cmd.Stderr = in, out, errw
}

// SetStdin, SetStdout and SetStderr rewire the program's streams.
func (t *Terminal) SetStdin(r io.Reader)  { t.cmd.Stdin = r }
func (t *Terminal) SetStdout(w io.Writer) { t.cmd.Stdout = w }
func (t *Terminal) SetStderr(w io.Writer) { t.cmd.Stderr = w }

// Run runs the program to its end, traced. Its error is an *ExitError when
// the program ran and failed.
func (t *Terminal) Run() error {
	err := Run(t.cmd)
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return &ExitError{Code: ee.ExitCode(), err: ee}
	}
	return err
}

// Exec replaces this process with the program (execve): the terminal and
// the process id pass to it, and Exec returns only on failure. The trace
// line is printed just before, so its duration means nothing.
func (t *Terminal) Exec() error {
	path, err := exec.LookPath(t.cmd.Path)
	if err != nil {
		return err
	}

	env := t.cmd.Env
	if env == nil {
		env = os.Environ()
	}

	if t.cmd.Dir != "" {
		if err := os.Chdir(t.cmd.Dir); err != nil {
			return err
		}
	}

	TraceTo(os.Stderr, Tracing(), t.cmd.Args)()
	return syscall.Exec(path, t.cmd.Args, env)
}

// ExitError says the program ran and ended unsuccessfully: with Code, or
// -1 when a signal ended it.
type ExitError struct {
	Code int
	err  error
}

func (e *ExitError) Error() string { return e.err.Error() }
func (e *ExitError) Unwrap() error { return e.err }

// LookPath finds a program the way the shell would (exec.LookPath), for
// callers that only need to know where it is.
func LookPath(name string) (string, error) { return exec.LookPath(name) }
