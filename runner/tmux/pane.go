package tmux

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
)

// PaneState is a pane's process state.
type PaneState struct {
	PaneID string
	PID    int // pane_pid; still reported once the pane is dead

	// Dead: the program has exited, tmux has read all its output and knows
	// how it ended (Closed, and HasStatus or HasSignal). This is the state
	// to wait for before the final CapturePane and KillSession.
	Dead bool

	// Closed is tmux's raw #{pane_dead}: the pane's pty is closed. tmux 3.3
	// sets it on the pty's EOF, which can come before it has reaped the
	// child, so for a moment a pane can be closed with no status yet (and a
	// program that closes its terminal but keeps running stays that way).
	Closed bool

	// ExitStatus is pane_dead_status, set (HasStatus) when the program
	// exited normally.
	ExitStatus int
	HasStatus  bool

	// Signal is pane_dead_signal (tmux 3.3+), set (HasSignal) when the
	// program was killed by a signal; then there is no ExitStatus.
	Signal    int
	HasSignal bool

	// Piped is #{pane_pipe}: the pane's output still goes to its
	// pipe-pane command. It drops to false while the pane lives when that
	// command died, e.g. `cat >> pane.log` on a full disk.
	Piped bool

	// Command is #{pane_current_command}: the name of the pane's
	// foreground process ("sleep" once the program has started).
	Command string

	serverPID int // #{pid}, for the SIGCHLD nudge
}

// Fields are separated by '|', not tabs: under LC_ALL=C tmux 3.3 prints
// a tab in -F output as '_'. Only the last field (the command) is free text.
const paneFormat = "#{pane_id}|#{pane_active}|#{pane_pid}|#{pane_dead}|#{pane_dead_status}|#{pane_dead_signal}|#{pid}|#{pane_pipe}|#{pane_current_command}"

// PaneState reads the state of target: a pane id ("%7", preferred) or any
// tmux target, e.g. PaneTarget(name), which means that window's active pane.
// A missing session or pane is an error matching ErrNotFound.
//
// It uses list-panes, not display-message: in tmux 3.3 `display-message -p
// -t X` silently falls back to another pane when X does not exist.
//
// tmux built with libutempter (Debian's 3.3a is) can miss the SIGCHLD of a
// pane's program (https://github.com/tmux/tmux/issues/311, …/2679,
// …/4559): the program stays an
// unreaped zombie, the pane is Closed but never gets a status. Seen in about
// 1 run in 100 with a program that exits at once. So when PaneState sees a
// closed pane without a status it sends SIGCHLD to the tmux server, which
// makes it reap its children, and reads the pane again; a caller polling
// PaneState therefore always ends up with Dead and a status.
func (c *Client) PaneState(ctx context.Context, target string) (PaneState, error) {
	st, err := c.paneState(ctx, target)
	if err != nil || !st.Closed || st.Dead || st.serverPID <= 0 {
		return st, err
	}
	_ = syscall.Kill(st.serverPID, syscall.SIGCHLD)
	return c.paneState(ctx, target)
}

func (c *Client) paneState(ctx context.Context, target string) (PaneState, error) {
	res, err := c.run(ctx, "list-panes", "-t", target, "-F", paneFormat)
	if err != nil {
		return PaneState{}, err
	}

	st, ok, err := parsePaneStates(res.Stdout, target)
	if err != nil {
		return PaneState{}, err
	}
	if !ok {
		return PaneState{}, &Error{Args: []string{"list-panes", "-t", target}, ExitCode: 1,
			Stderr: "can't find pane: " + target}
	}

	return st, nil
}

// parsePaneStates picks from list-panes output the pane whose id is target,
// or, when target is not a pane id, the active pane.
func parsePaneStates(out []byte, target string) (PaneState, bool, error) {
	for _, l := range strings.Split(string(out), "\n") {
		if l == "" {
			continue
		}

		f := strings.SplitN(l, "|", 9)
		if len(f) != 9 {
			return PaneState{}, false, fmt.Errorf("tmux: unexpected list-panes output %q", l)
		}

		if strings.HasPrefix(target, "%") {
			if f[0] != target {
				continue
			}
		} else if f[1] != "1" {
			continue
		}

		st := PaneState{PaneID: f[0], Closed: f[3] == "1", Piped: f[7] == "1", Command: f[8]}
		var err error
		if st.serverPID, err = strconv.Atoi(f[6]); err != nil {
			return PaneState{}, false, fmt.Errorf("tmux: unexpected server pid %q", f[6])
		}
		if st.PID, err = strconv.Atoi(f[2]); err != nil {
			return PaneState{}, false, fmt.Errorf("tmux: unexpected pane pid %q", f[2])
		}

		if f[4] != "" {
			if st.ExitStatus, err = strconv.Atoi(f[4]); err != nil {
				return PaneState{}, false, fmt.Errorf("tmux: unexpected pane status %q", f[4])
			}
			st.HasStatus = true
		}

		if f[5] != "" {
			if st.Signal, err = strconv.Atoi(f[5]); err != nil {
				return PaneState{}, false, fmt.Errorf("tmux: unexpected pane signal %q", f[5])
			}
			st.HasSignal = true
		}

		st.Dead = st.Closed && (st.HasStatus || st.HasSignal)
		return st, true, nil
	}

	return PaneState{}, false, nil
}

// CapturePane returns the pane's whole history and screen as text: wrapped
// lines joined, trailing spaces kept, no escape sequences. A dead pane kept
// by remain-on-exit ends with tmux's "Pane is dead (status N, …)" line.
func (c *Client) CapturePane(ctx context.Context, target string) ([]byte, error) {
	res, err := c.run(ctx, "capture-pane", "-p", "-J", "-S", "-", "-E", "-", "-t", target)
	if err != nil {
		return nil, err
	}
	return res.Stdout, nil
}

// CaptureScreen returns the pane's visible screen as text (no history, no
// escape sequences, wrapped lines joined): what the user would see now.
func (c *Client) CaptureScreen(ctx context.Context, target string) ([]byte, error) {
	res, err := c.run(ctx, "capture-pane", "-p", "-J", "-t", target)
	if err != nil {
		return nil, err
	}
	return res.Stdout, nil
}

// PaneCurrentPath returns the working directory of the program in target's
// pane.
func (c *Client) PaneCurrentPath(ctx context.Context, target string) (string, error) {
	res, err := c.run(ctx, "display-message", "-p", "-t", target, "#{pane_current_path}")
	if err != nil {
		return "", err
	}
	return strings.TrimSuffix(string(res.Stdout), "\n"), nil
}

// pipePane appends everything the pane outputs from now on (raw, with
// escape sequences) to logPath, an absolute path. It replaces any pipe the
// pane already has (no -o: with -o a second call would toggle the pipe off).
// Output written before the call is not in the log; NewSession's LogPath has
// no such gap.
//
// The log is best-effort at the very end: tmux 3.3a handles the program's
// exit (SIGCHLD) as soon as the pty has nothing left unread and then frees
// output it has read but not yet processed, so the last screenful or so of
// a burst written just before exiting can be missing from both the log and
// CapturePane (seen in about 1 run in 10 with 3000 lines then exit).
func (c *Client) pipePane(ctx context.Context, target, logPath string) error {
	if !filepath.IsAbs(logPath) {
		return fmt.Errorf("tmux: log path %q is not absolute", logPath)
	}
	_, err := c.run(ctx, "pipe-pane", "-t", target, pipeCommand(logPath))
	return err
}

// pipeCommand is the pipe-pane shell command appending to path. tmux runs it
// with /bin/sh -c after expanding it as a format, hence both escapes.
func pipeCommand(path string) string {
	return escapeFormat("exec cat >> " + shellQuote(path))
}

// SendKeys sends tmux key names ("C-c", "Enter", "q") to the pane.
func (c *Client) SendKeys(ctx context.Context, target string, keys ...string) error {
	if len(keys) == 0 {
		return errors.New("tmux: no keys to send")
	}
	args := append([]string{"send-keys", "-t", target, "--"}, keys...)
	_, err := c.run(ctx, args...)
	return err
}

// sendText types text into the pane literally (send-keys -l), no key names.
func (c *Client) sendText(ctx context.Context, target, text string) error {
	_, err := c.run(ctx, "send-keys", "-t", target, "-l", "--", text)
	return err
}

// PasteText pastes text into the pane as one paste (a tmux buffer pasted
// with paste-buffer -p): bracketed ("ESC [200~ … ESC [201~") when the
// program asked for bracketed paste, as claude and codex do, so it takes
// the text as pasted, not typed. Typed fast, codex's TUI takes the burst
// for a paste and an Enter that follows at once for a new line in it, so
// a prompt typed with sendText is never submitted. Newlines are kept (-r).
func (c *Client) PasteText(ctx context.Context, target, text string) error {
	buf := fmt.Sprintf("agency-paste-%d-%d", os.Getpid(), pasteSeq.Add(1))
	if _, err := c.run(ctx, "set-buffer", "-b", buf, "--", text); err != nil {
		return err
	}
	_, err := c.run(ctx, "paste-buffer", "-p", "-r", "-d", "-b", buf, "-t", target)
	if err != nil {
		c.run(ctx, "delete-buffer", "-b", buf)
	}
	return err
}

// pasteSeq makes PasteText's buffer names unique within the process.
var pasteSeq atomic.Int64

// SendCtrlC sends C-c: the terminal delivers SIGINT to the pane's foreground
// process group, which is how `agent stop` asks a headed agent to stop.
func (c *Client) SendCtrlC(ctx context.Context, target string) error {
	return c.SendKeys(ctx, target, "C-c")
}
