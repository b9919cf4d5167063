package tmux

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// defaultHistoryLimit is the scrollback kept for a session's pane when
// SessionOptions.HistoryLimit is 0 (tmux's own default is 2000 lines).
const defaultHistoryLimit = 20000

// exitStartDir is the pane's exit status when the start directory cannot be
// entered: the program is never started anywhere else.
const exitStartDir = 125

// SessionOptions describe a detached session running one program.
type SessionOptions struct {
	Name string   // session name: letters, digits, '-' and '_'
	Dir  string   // absolute path of an existing directory: the program's CWD
	Argv []string // the program and its arguments, passed verbatim
	Env  []string // NAME=VALUE pairs added to the program's environment

	Width, Height int // initial window size; 0 leaves tmux's default

	// HistoryLimit is the pane's scrollback in lines; 0 means
	// defaultHistoryLimit, negative leaves the server's setting.
	HistoryLimit int

	// LogPath, if set, receives the pane's output (appended, raw, with
	// escape sequences) from the program's first byte, as pipePane would.
	LogPath string
}

// Session is a session created by NewSession.
type Session struct {
	ID       string // "$3"
	Name     string
	WindowID string // "@5"
	PaneID   string // "%7": the program's pane; a stable target
	PanePID  int    // the program's pid (after exec it is the program itself)
}

// startGuard runs as `/bin/sh -c startGuard sh DIR ARGV...`: it enters DIR
// or exits exitStartDir, then execs ARGV without any word splitting or
// expansion ("$@"). tmux's own -c silently falls back to $HOME or / when the
// directory is missing; this makes that impossible.
var startGuard = `cd -- "$1" || exit ` + strconv.Itoa(exitStartDir) + `; shift; exec "$@"`

// NewSession creates a detached session running opts.Argv in opts.Dir.
//
// The program's pane has remain-on-exit set before the program can be seen
// to exit, so even a program that exits at once leaves a dead pane whose
// status PaneState reads; the caller removes the session with KillSession.
//
// Everything happens in one tmux invocation, as one command list, which the
// server runs without returning to its event loop; so no output is read and
// no child exit is handled between the commands:
//
//	new-session -d -s NAME -c DIR -- /bin/sh -c 'read _'   (placeholder)
//	set-option history-limit N       (applies to panes created after it)
//	new-window -k -t =NAME:^ -c DIR -e … -- /bin/sh -c GUARD sh DIR ARGV…
//	set-option -w remain-on-exit on
//	pipe-pane 'cat >> LOG'
//
// The placeholder exists only because history-limit is read when a pane is
// created and cannot be set per session before new-session; new-window -k
// replaces it at the same index without emptying the session.
//
// The program's environment is the tmux server's global environment (that
// of whichever process started the server, possibly long ago), plus the
// session's update-environment variables, plus opts.Env. Pass what the
// program needs (PATH, …) in opts.Env, or an absolute Argv[0].
func (c *Client) NewSession(ctx context.Context, opts SessionOptions) (Session, error) {
	if err := validName(opts.Name); err != nil {
		return Session{}, err
	}
	if len(opts.Argv) == 0 || opts.Argv[0] == "" {
		return Session{}, errors.New("tmux: empty program")
	}
	if !filepath.IsAbs(opts.Dir) {
		return Session{}, fmt.Errorf("tmux: start directory %q is not absolute", opts.Dir)
	}

	if fi, err := os.Stat(opts.Dir); err != nil {
		return Session{}, fmt.Errorf("tmux: start directory: %w", err)
	} else if !fi.IsDir() {
		return Session{}, fmt.Errorf("tmux: start directory %q is not a directory", opts.Dir)
	}

	for _, kv := range opts.Env {
		if err := validEnv(kv); err != nil {
			return Session{}, err
		}
	}

	if opts.LogPath != "" && !filepath.IsAbs(opts.LogPath) {
		return Session{}, fmt.Errorf("tmux: log path %q is not absolute", opts.LogPath)
	}
	if opts.Width < 0 || opts.Height < 0 {
		return Session{}, errors.New("tmux: negative window size")
	}

	sess := "=" + opts.Name
	win := sess + ":^" // the session's lowest-numbered (only) window
	dir := escapeFormat(opts.Dir)

	args := []string{"new-session", "-d", "-P", "-F", "#{session_id}", "-s", opts.Name, "-c", dir}
	if opts.Width > 0 {
		args = append(args, "-x", strconv.Itoa(opts.Width))
	}
	if opts.Height > 0 {
		args = append(args, "-y", strconv.Itoa(opts.Height))
	}

	args = append(args, "--", "/bin/sh", "-c", "read _")

	hl := opts.HistoryLimit
	if hl == 0 {
		hl = defaultHistoryLimit
	}
	if hl > 0 {
		args = append(args, sep, "set-option", "-t", sess+":", "history-limit", strconv.Itoa(hl))
	}

	args = append(args, sep, "new-window", "-k", "-P", "-F", "#{window_id}|#{pane_id}|#{pane_pid}",
		"-t", win, "-c", dir)
	for _, kv := range opts.Env {
		args = append(args, "-e", kv)
	}

	args = append(args, "--", "/bin/sh", "-c", startGuard, "sh", opts.Dir)
	args = append(args, opts.Argv...)

	args = append(args, sep, "set-option", "-w", "-t", win, "remain-on-exit", "on")
	if opts.LogPath != "" {
		args = append(args, sep, "pipe-pane", "-t", win, pipeCommand(opts.LogPath))
	}

	res, err := c.run(ctx, args...)
	s, perr := parseNewSession(res.Stdout)
	s.Name = opts.Name
	if err == nil && perr != nil {
		err = perr
	}

	if err != nil {
		// If new-session itself succeeded (it printed the session id), a
		// later command failed: remove the half-made session by id, never
		// by name, so an existing session of that name is not touched.
		// The kill runs even when ctx was cancelled, within cleanupWait;
		// a session it cannot remove may run the agent with nobody
		// watching it, so the error says so.
		if s.ID != "" {
			kctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupWait)
			_, kerr := c.run(kctx, "kill-session", "-t", s.ID)
			cancel()
			if kerr != nil && !errors.Is(kerr, ErrNotFound) {
				err = fmt.Errorf("%w; the half-made session %s is left behind (tmux kill-session -t '%s'): %v", err, s.ID, s.ID, kerr)
			}
		}

		return Session{}, err
	}

	return s, nil
}

// cleanupWait bounds the removal of a half-made session.
const cleanupWait = 5 * time.Second

// parseNewSession reads "$ID\n@W|%P|PID\n" ('|', not tabs: under LC_ALL=C
// tmux prints a tab as '_') as printed by NewSession's
// command list. A partial Session (only ID) is returned with an error when
// new-window did not print.
func parseNewSession(out []byte) (Session, error) {
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	var s Session
	if len(lines) > 0 && strings.HasPrefix(lines[0], "$") {
		s.ID = lines[0]
	}
	if len(lines) < 2 {
		return s, fmt.Errorf("tmux: unexpected new-session output %q", out)
	}

	f := strings.Split(lines[1], "|")
	if len(f) != 3 {
		return s, fmt.Errorf("tmux: unexpected new-window output %q", lines[1])
	}

	pid, err := strconv.Atoi(f[2])
	if err != nil {
		return s, fmt.Errorf("tmux: unexpected pane pid %q", f[2])
	}

	s.WindowID, s.PaneID, s.PanePID = f[0], f[1], pid
	return s, nil
}

// validName reports whether name can be a session name: non-empty, only
// ASCII letters, digits, '-' and '_'. tmux rewrites '.' and ':' and expands
// '#' in names, and treats leading '$', '@', '%' in targets as ids.
func validName(name string) error {
	if name == "" {
		return errors.New("tmux: empty session name")
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return fmt.Errorf("tmux: invalid session name %q", name)
		}
	}
	return nil
}

func validEnv(kv string) error {
	k, _, ok := strings.Cut(kv, "=")
	if !ok || k == "" || strings.ContainsRune(kv, 0) {
		return fmt.Errorf("tmux: invalid environment entry %q", kv)
	}
	for i, r := range k {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9') {
			return fmt.Errorf("tmux: invalid environment name %q", k)
		}
	}
	return nil
}

// sessionTarget is the exact-match target for a session ("=name"), so that
// "agency-1" never matches "agency-12".
func sessionTarget(name string) string { return "=" + name }

// PaneTarget is the target for the active pane of a session's current
// window ("=name:"). Prefer Session.PaneID, which stays right if the user
// opens more windows or panes in the session.
func PaneTarget(name string) string { return "=" + name + ":" }

// HasSession reports whether a session with exactly this name exists. No
// server running means false, not an error.
func (c *Client) HasSession(ctx context.Context, name string) (bool, error) {
	if err := validName(name); err != nil {
		return false, err
	}
	_, err := c.run(ctx, "has-session", "-t", sessionTarget(name))
	if err == nil {
		return true, nil
	}
	if errors.Is(err, ErrNotFound) {
		return false, nil
	}
	return false, err
}

// KillSession kills the session with exactly this name (SIGHUP to its
// panes' processes). A missing session or server is reported as an error
// matching ErrNotFound.
func (c *Client) KillSession(ctx context.Context, name string) error {
	if err := validName(name); err != nil {
		return err
	}
	_, err := c.run(ctx, "kill-session", "-t", sessionTarget(name))
	return err
}

// Version is `tmux -V`'s line ("tmux 3.3a").
func (c *Client) Version(ctx context.Context) (string, error) {
	res, err := c.run(ctx, "-V")
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(res.Stdout)), nil
}

// ListSessions returns the names of the sessions starting with prefix, in
// tmux's order. No server running means an empty list.
func (c *Client) ListSessions(ctx context.Context, prefix string) ([]string, error) {
	res, err := c.run(ctx, "list-sessions", "-F", "#{session_name}")
	if err != nil {
		if errors.Is(err, ErrNoServer) {
			return nil, nil
		}
		return nil, err
	}
	return parseSessions(res.Stdout, prefix), nil
}

func parseSessions(out []byte, prefix string) []string {
	var names []string
	for _, l := range strings.Split(string(out), "\n") {
		if l != "" && strings.HasPrefix(l, prefix) {
			names = append(names, l)
		}
	}
	return names
}
