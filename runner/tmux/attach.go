package tmux

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/git-agency/git-agency/internal/subproc"
)

// attachCmd returns `tmux attach-session -t =name` wired to this process's
// terminal, for the caller to Run. TMUX is removed from its environment so
// it attaches on the default server even from inside another tmux server
// (which then nests, as the user asked for a session that lives elsewhere).
func (c *Client) attachCmd(name string) (*subproc.Terminal, error) {
	return c.terminalCmd(name, c.env(), "attach-session", "-t", sessionTarget(name))
}

// CurrentClient is the name of the tmux client this process runs under
// (the one a switchClientCmd moves) and the id ($N) of the session it shows,
// found as switch-client finds them: from $TMUX and $TMUX_PANE, kept for
// this one call.
func (c *Client) CurrentClient(ctx context.Context) (client, session string, err error) {
	res, err := c.runEnv(ctx, c.insideEnv(), "display-message", "-p", "#{client_name}|#{session_id}")
	if err != nil {
		return "", "", err
	}
	client, session, _ = strings.Cut(strings.TrimSuffix(string(res.Stdout), "\n"), "|")
	if client == "" {
		return "", "", errors.New("tmux: no current client")
	}
	return client, session, nil
}

// SwitchClientTo moves the named client to the session of id sessionID
// ($N, as CurrentClient gives it: the user's own sessions may have any
// name).
func (c *Client) SwitchClientTo(ctx context.Context, client, sessionID string) error {
	if len(sessionID) < 2 || sessionID[0] != '$' || strings.Trim(sessionID[1:], "0123456789") != "" {
		return fmt.Errorf("tmux: invalid session id %q", sessionID)
	}
	_, err := c.run(ctx, "switch-client", "-c", client, "-t", sessionID)
	return err
}

// ClientOn reports whether the client named client is attached and shows
// session name.
func (c *Client) ClientOn(ctx context.Context, client, name string) (bool, error) {
	// '|' between them: tmux prints a tab in a format as '_'; a client's
	// name is its terminal's path.
	res, err := c.run(ctx, "list-clients", "-F", "#{client_name}|#{session_name}")
	if err != nil {
		return false, err
	}

	for _, l := range strings.Split(string(res.Stdout), "\n") {
		if cl, sess, ok := strings.Cut(l, "|"); ok && cl == client {
			return sess == name, nil
		}
	}

	return false, nil
}

// insideEnv is the base environment with TMUX and TMUX_PANE kept.
func (c *Client) insideEnv() []string {
	if c.Env == nil {
		return os.Environ()
	}
	return c.Env
}

// switchClientCmd returns `tmux switch-client -t =name` for a caller inside
// tmux: it keeps TMUX (and TMUX_PANE), which is how tmux finds the client to
// switch. Only meaningful when the enclosing server is the default server;
// AttachOrSwitchCmd checks that.
//
// The session's detach-on-destroy is set to off first: when the agent ends
// and its session goes, tmux moves the client to another of its sessions
// instead of detaching it, which would throw the user out of tmux
// altogether (SwitchClientTo then puts it back where it came from). And the
// session is marked with returnOption, so that the tmux prefix then d
// takes a client switched there back (bindReturn).
func (c *Client) switchClientCmd(name string) (*subproc.Terminal, error) {
	return c.terminalCmd(name, c.insideEnv(), "set-option", "-t", PaneTarget(name), "detach-on-destroy", "off", ";",
		"set-option", "-t", PaneTarget(name), returnOption, "1", ";",
		"switch-client", "-t", sessionTarget(name))
}

// AttachOrSwitchCmd returns switchClientCmd when this process runs inside a
// client of the server that holds the session ($TMUX names the same socket),
// with the way back bound (bindReturn), and attachCmd otherwise.
func (c *Client) AttachOrSwitchCmd(ctx context.Context, name string) (*subproc.Terminal, error) {
	if c.insideServer(ctx, name) {
		if err := c.bindReturn(ctx); err != nil {
			return nil, err
		}
		return c.switchClientCmd(name)
	}
	return c.attachCmd(name)
}

// returnOption is the session user option that marks an agent's session a
// client was switched to (switchClientCmd).
const returnOption = "@agency-return"

// returnCondition holds for a client on a session marked returnOption that
// came there from another session of the server (a client attached to it
// from a plain terminal has no last session: it detaches as usual).
const returnCondition = "#{&&:#{" + returnOption + "},#{client_last_session}}"

// bindReturn makes "the tmux prefix, then d" the way back from an agent's
// session a client was switched to: there it runs `switch-client -l`, back
// to the session the client came from, instead of detaching the client
// (which would take the user out of tmux). Key bindings belong to the
// whole server, so the key keeps its own binding everywhere else: what
// `list-keys` shows for it (detach-client, or the user's) becomes the
// other branch of the condition. A binding that has the condition already
// is left as it is.
func (c *Client) bindReturn(ctx context.Context) error {
	res, err := c.run(ctx, "list-keys", "-T", "prefix", "d")
	var repeat bool
	var orig string
	if err == nil {
		repeat, orig = boundCommand(string(res.Stdout))
	}
	if strings.Contains(orig, returnOption) {
		return nil
	}

	args := []string{"bind-key"}
	if repeat {
		args = append(args, "-r")
	}

	args = append(args, "-T", "prefix", "d", "if-shell", "-F", returnCondition, "switch-client -l")
	if orig != "" {
		args = append(args, orig)
	}

	_, err = c.run(ctx, args...)
	return err
}

// boundCommand reads `list-keys -T prefix d`: whether the binding repeats
// (-r) and its command, as tmux prints it for parsing again ("" when the
// key is not bound).
func boundCommand(out string) (repeat bool, command string) {
	f := strings.Fields(strings.TrimSpace(strings.SplitN(out, "\n", 2)[0]))
	if len(f) == 0 || f[0] != "bind-key" {
		return false, ""
	}

	i := 1
	if i < len(f) && f[i] == "-r" {
		repeat, i = true, i+1
	}
	if i+3 >= len(f) || f[i] != "-T" || f[i+1] != "prefix" || f[i+2] != "d" {
		return false, ""
	}

	// The command as printed, from its first word on (its own spacing
	// and quotes kept).
	line := strings.TrimSpace(strings.SplitN(out, "\n", 2)[0])
	for _, w := range f[:i+3] {
		line = strings.TrimLeft(strings.TrimPrefix(line, w), " \t")
	}

	return repeat, line
}

// Inside reports whether this process runs inside a client of the server
// that holds session name (attaching then switches that client).
func (c *Client) Inside(ctx context.Context, name string) bool {
	return c.insideServer(ctx, name)
}

// insideServer reports whether $TMUX (from the client's base environment)
// points at the default server's socket.
func (c *Client) insideServer(ctx context.Context, name string) bool {
	inside := c.getenv("TMUX")
	sock, _, _ := strings.Cut(inside, ",")
	if sock == "" {
		return false
	}
	ours, err := c.socketPath(ctx, name)
	if err != nil {
		return false
	}
	return samePath(sock, ours)
}

// socketPath returns the socket of the server that holds session name (the
// default server).
func (c *Client) socketPath(ctx context.Context, name string) (string, error) {
	if err := validName(name); err != nil {
		return "", err
	}
	res, err := c.run(ctx, "display-message", "-p", "-t", PaneTarget(name), "#{socket_path}")
	if err != nil {
		return "", err
	}
	return strings.TrimSuffix(string(res.Stdout), "\n"), nil
}

func (c *Client) getenv(key string) string {
	if c.Env == nil {
		return os.Getenv(key)
	}
	v := ""
	for _, kv := range c.Env {
		if k, val, ok := strings.Cut(kv, "="); ok && k == key {
			v = val
		}
	}
	return v
}

func samePath(a, b string) bool {
	if a == b {
		return true
	}
	ra, err1 := filepath.EvalSymlinks(a)
	rb, err2 := filepath.EvalSymlinks(b)
	return err1 == nil && err2 == nil && ra == rb
}

func (c *Client) terminalCmd(name string, env []string, args ...string) (*subproc.Terminal, error) {
	if err := validName(name); err != nil {
		return nil, err
	}
	p, err := c.path()
	if err != nil {
		return nil, err
	}
	return subproc.NewTerminal(append([]string{p}, args...), "", env), nil
}
