// Package tmux is the only place that runs the tmux binary. It exposes one
// method per tmux operation with typed results, built on one private
// primitive (run), and takes a CommandRunner so tests can inject failures.
//
// # Which server
//
// Sessions live on the user's default tmux server: the socket tmux picks
// from TMUX_TMPDIR (or /tmp) and the uid, so a plain `tmux ls` shows them.
// We never pass -L or -S. A tmux client started with $TMUX set talks to the
// server named in $TMUX instead, which may be a different server (the user
// ran `tmux -L work`), and whether $TMUX is set differs between the CLI, the
// supervisor (setsid, possibly started from inside tmux) and a later
// `agent ls` in a plain shell. So every command runs with TMUX and TMUX_PANE
// removed from its environment and therefore always addresses the same
// default server. The one exception is switch-client, which needs $TMUX to
// find the client it switches; switchClientCmd is only used when the
// enclosing server is our server (see AttachOrSwitchCmd).
//
// # Arguments
//
// tmux re-parses its command-line arguments: an argument ending in ';' ends
// the tmux command (`tmux new-session -- prog 'x;' kill-server` would run
// kill-server), and "\;" at the end becomes ";". Every argument we pass is
// escaped so it arrives verbatim (see escapeArg). Some options are also
// expanded as formats (-s session name, -c start directory, the pipe-pane
// command), where '#' must be doubled.
package tmux

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

// Cmd is one tmux invocation.
type Cmd struct {
	Path  string   // the tmux binary
	Args  []string // without the leading "tmux", already escaped
	Env   []string // the complete environment
	Stdin io.Reader
}

// Result is what a tmux invocation produced.
type Result struct {
	Stdout   []byte
	Stderr   []byte
	ExitCode int
}

// CommandRunner runs tmux. ExecRunner is the real one; tests wrap it to fail
// on a chosen call.
type CommandRunner interface {
	Run(ctx context.Context, c Cmd) (Result, error)
}

// ExecRunner runs c.Path.
type ExecRunner struct{}

// Run executes tmux. A non-zero exit is returned as a *Error; an error
// starting tmux at all is returned as is.
func (ExecRunner) Run(ctx context.Context, c Cmd) (Result, error) {
	cmd := exec.CommandContext(ctx, c.Path, c.Args...)
	cmd.Env = c.Env
	cmd.Stdin = c.Stdin
	var out, errb bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &errb
	err := subproc.Run(cmd)
	res := Result{Stdout: out.Bytes(), Stderr: errb.Bytes()}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		res.ExitCode = ee.ExitCode()
		return res, &Error{Args: c.Args, ExitCode: res.ExitCode, Stderr: string(res.Stderr)}
	}

	return res, err
}

// Error is a tmux command that exited non-zero. tmux's stderr is kept
// verbatim. errors.Is(err, ErrNoServer) and errors.Is(err, ErrNotFound)
// classify it.
type Error struct {
	Args     []string
	ExitCode int
	Stderr   string
}

func (e *Error) Error() string {
	msg := fmt.Sprintf("tmux %s: exit %d", strings.Join(e.Args, " "), e.ExitCode)
	if s := strings.TrimSpace(e.Stderr); s != "" {
		msg += ": " + s
	}
	return msg
}

// Is reports ErrNoServer when no tmux server is running, and ErrNotFound
// when the session, window or pane does not exist (which includes "no
// server").
func (e *Error) Is(target error) bool {
	switch target {
	case ErrNoServer:
		return isNoServer(e.Stderr)
	case ErrNotFound:
		return isNoServer(e.Stderr) || isNotFound(e.Stderr)
	}
	return false
}

var (
	// ErrNoServer: no tmux server is running on the default socket.
	ErrNoServer = errors.New("tmux: no server running")
	// ErrNotFound: the session, window or pane does not exist.
	ErrNotFound = errors.New("tmux: no such session or pane")
)

func isNoServer(stderr string) bool {
	// tmux 3.3: "no server running on /tmp/tmux-0/default" when the socket
	// is missing or stale, "error connecting to <path> (No such file or
	// directory)" when its directory is missing too.
	return strings.Contains(stderr, "no server running on ") ||
		strings.Contains(stderr, "error connecting to ")
}

func isNotFound(stderr string) bool {
	for _, s := range []string{"can't find session", "can't find window", "can't find pane",
		"no such session", "no such window", "no such pane", "session not found"} {
		if strings.Contains(stderr, s) {
			return true
		}
	}
	return false
}

// NotFoundError is returned when the tmux binary is not on PATH. The CLI
// maps it to E_TMUX_NOT_FOUND.
type NotFoundError struct {
	Err error // from exec.LookPath
}

func (e *NotFoundError) Error() string { return "tmux not found in PATH" }
func (e *NotFoundError) Unwrap() error { return e.Err }

// Available returns the path of the tmux binary, or a *NotFoundError.
func Available() (string, error) {
	p, err := exec.LookPath("tmux")
	if err != nil {
		return "", &NotFoundError{Err: err}
	}
	return p, nil
}

// Client runs tmux against the default server. The zero value is ready to
// use: it finds tmux on PATH, runs it with ExecRunner and takes the
// environment from os.Environ().
type Client struct {
	Path   string        // tmux binary; "" means look it up on PATH
	Env    []string      // base environment; nil means os.Environ()
	Runner CommandRunner // nil means ExecRunner
	// CallTimeout bounds every tmux call (0: only the caller's context
	// does), for callers that poll tmux for as long as an agent runs.
	CallTimeout time.Duration
}

func (c *Client) path() (string, error) {
	if c.Path != "" {
		return c.Path, nil
	}
	return Available()
}

// env is the base environment scrubbed as for every child (subproc.Scrub):
// without TMUX and TMUX_PANE, so tmux uses the default socket (TMUX_TMPDIR
// is kept: it is how the default is chosen).
func (c *Client) env() []string {
	base := c.Env
	if base == nil {
		base = os.Environ()
	}
	return subproc.Scrub(base, nil)
}

func (c *Client) runner() CommandRunner {
	if c.Runner != nil {
		return c.Runner
	}
	return ExecRunner{}
}

// run runs one tmux command line. args are escaped here; a literal ";"
// element is passed through unescaped as tmux's command separator (use sep).
func (c *Client) run(ctx context.Context, args ...string) (Result, error) {
	return c.runEnv(ctx, c.env(), args...)
}

// runEnv is run with the given environment.
func (c *Client) runEnv(ctx context.Context, env []string, args ...string) (Result, error) {
	p, err := c.path()
	if err != nil {
		return Result{}, err
	}

	esc := make([]string, len(args))
	for i, a := range args {
		if a == sep {
			esc[i] = ";"
			continue
		}
		esc[i] = escapeArg(a)
	}

	if c.CallTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.CallTimeout)
		defer cancel()
	}

	return c.runner().Run(ctx, Cmd{Path: p, Args: esc, Env: env})
}

// sep separates tmux commands in one invocation. No caller argument can
// equal it (tmux arguments cannot contain NUL); a caller's ";" is escaped.
const sep = "\x00;"

// escapeArg protects an argument from tmux's command-line parsing: a
// trailing ';' would end the command, so it is sent as "\;", which tmux turns
// back into ';'. ("a\;" is sent as "a\\;" and arrives as "a\;".)
func escapeArg(s string) string {
	if strings.HasSuffix(s, ";") {
		return s[:len(s)-1] + `\;`
	}
	return s
}

// escapeFormat doubles '#' for options tmux expands as formats.
func escapeFormat(s string) string { return strings.ReplaceAll(s, "#", "##") }

// shellQuote quotes s for /bin/sh in single quotes; each quote inside is
// written as close-quote, backslash-quote, reopen-quote.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
