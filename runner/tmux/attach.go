package tmux

import (
	"context"
	"os"
	"path/filepath"
	"strings"

	"github.com/git-agency/git-agency/internal/subproc"
)

// AttachCmd returns `tmux attach-session -t =name` wired to this process's
// terminal, for the caller to Run. TMUX is removed from its environment so
// it attaches on the default server even from inside another tmux server
// (which then nests, as the user asked for a session that lives elsewhere).
func (c *Client) AttachCmd(name string) (*subproc.Terminal, error) {
	return c.terminalCmd(name, c.env(), "attach-session", "-t", SessionTarget(name))
}

// SwitchClientCmd returns `tmux switch-client -t =name` for a caller inside
// tmux: it keeps TMUX (and TMUX_PANE), which is how tmux finds the client to
// switch. Only meaningful when the enclosing server is the default server;
// AttachOrSwitchCmd checks that.
//
// The session's detach-on-destroy is set to off first: when the agent ends
// and its session goes, the client moves on to the session used most
// recently (the one it came from) instead of being detached, which would
// throw the user out of tmux altogether.
func (c *Client) SwitchClientCmd(name string) (*subproc.Terminal, error) {
	env := c.Env
	if env == nil {
		env = os.Environ()
	}
	return c.terminalCmd(name, env, "set-option", "-t", PaneTarget(name), "detach-on-destroy", "off", ";",
		"switch-client", "-t", SessionTarget(name))
}

// AttachOrSwitchCmd returns SwitchClientCmd when this process runs inside a
// client of the server that holds the session ($TMUX names the same socket),
// and AttachCmd otherwise.
func (c *Client) AttachOrSwitchCmd(ctx context.Context, name string) (*subproc.Terminal, error) {
	if c.insideServer(ctx, name) {
		return c.SwitchClientCmd(name)
	}
	return c.AttachCmd(name)
}

// insideServer reports whether $TMUX (from the client's base environment)
// points at the default server's socket.
func (c *Client) insideServer(ctx context.Context, name string) bool {
	inside := c.getenv("TMUX")
	sock, _, _ := strings.Cut(inside, ",")
	if sock == "" {
		return false
	}
	ours, err := c.SocketPath(ctx, name)
	if err != nil {
		return false
	}
	return samePath(sock, ours)
}

// SocketPath returns the socket of the server that holds session name (the
// default server).
func (c *Client) SocketPath(ctx context.Context, name string) (string, error) {
	if err := ValidName(name); err != nil {
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
	if err := ValidName(name); err != nil {
		return nil, err
	}
	p, err := c.path()
	if err != nil {
		return nil, err
	}
	return subproc.NewTerminal(append([]string{p}, args...), "", env), nil
}
