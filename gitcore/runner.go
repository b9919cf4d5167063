// Package gitcore is the only place that runs git. It exposes one method per
// git operation with typed results, built on two private primitives (query
// and run), parses only machine formats, and takes a CommandRunner so tests
// can inject failures.
package gitcore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/git-agency/git-agency/internal/subproc"
)

// Cmd is one git invocation.
type Cmd struct {
	Dir  string
	Args []string // without the leading "git"
	// Pin is configuration ("key=value") passed as `-c key=value` before
	// Args: what git-agency's own calls override in the user's config
	// (pinned). Kept apart from Args so errors and tests see the command.
	Pin   []string
	Env   []string // the complete environment
	Stdin io.Reader
	// Group runs git in a process group of its own, and a cancelled
	// context interrupts the whole group (SIGINT, what Ctrl-C in a
	// terminal does) instead of killing git alone: the children git
	// starts (the checkout of a `worktree add`, a hook) stop with it,
	// and git removes what it had half made, as it does on Ctrl-C. A
	// hangup of ours is passed on to the group (see interruptGroup for
	// what the terminal no longer reaches).
	Group bool
}

// groupWaitDelay is how long an interrupted group (Cmd.Group) may take to
// end (git removing a half-written tree) before git is killed.
const groupWaitDelay = time.Minute

// Result is what a git invocation produced.
type Result struct {
	Stdout   []byte
	Stderr   []byte
	ExitCode int
}

// CommandRunner runs git. ExecRunner is the real one; tests wrap it to fail
// on a chosen call.
type CommandRunner interface {
	Run(ctx context.Context, c Cmd) (Result, error)
}

// ExecRunner runs the git binary found on PATH.
type ExecRunner struct{}

// Run executes git. A non-zero exit is returned as a *GitError; an error
// starting git at all is returned as is.
func (ExecRunner) Run(ctx context.Context, c Cmd) (Result, error) {
	args := make([]string, 0, 2*len(c.Pin)+len(c.Args))
	for _, kv := range c.Pin {
		args = append(args, "-c", kv)
	}

	cmd := exec.CommandContext(ctx, "git", append(args, c.Args...)...)
	cmd.Dir = c.Dir
	cmd.Env = c.Env
	cmd.Stdin = c.Stdin
	var out, errb bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &errb
	var err error
	if c.Group {
		interruptGroup(cmd, groupWaitDelay)
		err = runGroup(cmd)
	} else {
		err = subproc.Run(cmd)
	}

	res := Result{Stdout: out.Bytes(), Stderr: errb.Bytes()}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		res.ExitCode = ee.ExitCode()
		return res, &GitError{Args: c.Args, ExitCode: res.ExitCode, Stderr: string(res.Stderr)}
	}

	return res, err
}

// GitError is a git command that exited non-zero. Its stderr reaches the
// user verbatim inside our message.
type GitError struct {
	Args     []string
	ExitCode int
	Stderr   string
}

func (e *GitError) Error() string {
	msg := fmt.Sprintf("git %s: exit %d", strings.Join(e.Args, " "), e.ExitCode)
	if s := strings.TrimSpace(e.Stderr); s != "" {
		msg += ": " + s
	}
	return msg
}

// exitCode returns the git exit code in err, or -1.
func exitCode(err error) int {
	var ge *GitError
	if errors.As(err, &ge) {
		return ge.ExitCode
	}
	return -1
}

// cleanEnv returns env scrubbed as for every child (subproc.Scrub: no
// repository-pinning variables, GIT_CONFIG_PARAMETERS kept), with LC_ALL=C
// and GIT_TERMINAL_PROMPT=0 set. extra entries are appended last (and so
// win).
func cleanEnv(env []string, extra ...string) []string {
	return subproc.Scrub(env, []string{"LC_ALL", "GIT_TERMINAL_PROMPT"},
		append([]string{"LC_ALL=C", "GIT_TERMINAL_PROMPT=0"}, extra...)...)
}

// userEnv is the process environment with only LC_ALL and
// GIT_TERMINAL_PROMPT forced: it respects what git exported to us, for the
// discovery of the user's own repository.
func userEnv(extra ...string) []string {
	out := []string{}
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if k == "LC_ALL" || k == "GIT_TERMINAL_PROMPT" {
			continue
		}
		out = append(out, kv)
	}
	out = append(out, "LC_ALL=C", "GIT_TERMINAL_PROMPT=0")
	return append(out, extra...)
}
