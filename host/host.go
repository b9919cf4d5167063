// Package host is the only place that runs ssh: one connection per host
// (OpenSSH's ControlMaster, with the user's own ssh, config, keys, agent
// and known_hosts), the calls to the host's git-agency over it, and the
// ssh command git uses to push and fetch over the same connection.
// Host key checking is never turned off, and no secret is stored: ssh
// authenticates as the user's ssh always does.
package host

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/git-agency/git-agency/internal/subproc"
)

// Host is one configured host (agency.host.<name>.*).
type Host struct {
	Name string
	// Dest is the ssh destination: user@host, host, or a ~/.ssh/config
	// alias (agency.host.<name>.ssh).
	Dest string
	// ConfigFile, when set, is passed as `ssh -F` (agency.host.sshConfig).
	ConfigFile string
	// ControlDir holds the control sockets (short: sun_path is 108 bytes).
	ControlDir string
}

// ErrBadDest is a destination ssh would read as an option.
var ErrBadDest = errors.New("an ssh destination may not begin with '-'")

// CheckDest refuses a destination ssh could take for an option.
func CheckDest(dest string) error {
	if dest == "" || strings.HasPrefix(dest, "-") || strings.ContainsAny(dest, " \t\n") {
		return ErrBadDest
	}
	return nil
}

// maxSocketPath keeps a control socket's path within sun_path (108 bytes,
// with room for the temporary suffix ssh adds while it binds).
const maxSocketPath = 80

// ControlDirFor is where the control sockets of the data directory dataDir
// live: <dataDir>/cm, or a private directory under the system's temporary
// directory when that path is too long for a socket.
func ControlDirFor(dataDir string) string {
	d := filepath.Join(dataDir, "cm")
	if len(d)+18 <= maxSocketPath {
		return d
	}
	sum := sha256.Sum256([]byte(dataDir))
	return filepath.Join(os.TempDir(), "agency-cm-"+strconv.Itoa(os.Getuid())+"-"+hex.EncodeToString(sum[:4]))
}

// ControlPath is this host's control socket.
func (h *Host) ControlPath() string {
	sum := sha256.Sum256([]byte(h.Name + "\x00" + h.Dest + "\x00" + h.ConfigFile))
	return filepath.Join(h.ControlDir, hex.EncodeToString(sum[:8]))
}

// Options are the ssh options of every call: one shared connection that
// outlives the command (ControlPersist), never a prompt (BatchMode), a
// dead link noticed (ServerAliveInterval), a bounded connect.
func (h *Host) Options() []string {
	var out []string
	if h.ConfigFile != "" {
		out = append(out, "-F", h.ConfigFile)
	}

	return append(out,
		"-o", "ControlMaster=auto",
		"-o", "ControlPath="+h.ControlPath(),
		"-o", "ControlPersist=600",
		"-o", "BatchMode=yes",
		"-o", "ServerAliveInterval=5",
		"-o", "ServerAliveCountMax=2",
		"-o", "ConnectTimeout=4",
	)
}

// SSHCommand is the command git runs for an ssh remote
// (GIT_SSH_COMMAND): ssh with the same options, over the same connection.
func (h *Host) SSHCommand() string {
	parts := []string{"ssh"}
	for _, o := range h.Options() {
		parts = append(parts, shellQuote(o))
	}
	return strings.Join(parts, " ")
}

// URL is an ssh URL git can push to and fetch from: the absolute path
// path on the host.
func (h *Host) URL(path string) string {
	return "ssh://" + h.Dest + path
}

// Result is what a remote command printed.
type Result struct {
	Stdout, Stderr []byte
	ExitCode       int
}

// ErrUnreachable is a host ssh could not reach (ssh's own exit status 255).
type ErrUnreachable struct {
	Host   string
	Stderr string
}

func (e *ErrUnreachable) Error() string {
	msg := "host " + e.Host + " is unreachable"
	if s := strings.TrimSpace(e.Stderr); s != "" {
		msg += ": " + s
	}
	return msg
}

// Run runs the shell command line remote on the host (ssh passes it to the
// login shell) with stdin, bounded by ctx. A non-zero exit of the remote
// command is in Result.ExitCode with a nil error; a connection failure is
// *ErrUnreachable.
func (h *Host) Run(ctx context.Context, remote string, stdin []byte) (Result, error) {
	var out, errb bytes.Buffer
	res, err := h.RunTo(ctx, remote, stdin, &out, &errb)
	res.Stdout, res.Stderr = out.Bytes(), errb.Bytes()
	return res, err
}

// RunTo is Run with the remote command's output streamed to stdout and
// stderr as it comes (`agent logs -f` of an agent on a host).
func (h *Host) RunTo(ctx context.Context, remote string, stdin []byte, stdout, stderr io.Writer) (Result, error) {
	if err := CheckDest(h.Dest); err != nil {
		return Result{}, err
	}
	if err := os.MkdirAll(h.ControlDir, 0o700); err != nil {
		return Result{}, err
	}

	args := append(h.Options(), "-T", "--", h.Dest, remote)
	cmd := exec.CommandContext(ctx, "ssh", args...)
	cmd.Env = subproc.Scrub(os.Environ(), nil)
	cmd.Stdin = bytes.NewReader(stdin)
	var errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = stdout, io.MultiWriter(stderr, &errb)

	// The master ssh forks to the background and keeps the pipes it was
	// given: do not wait for them after ssh itself ended.
	cmd.WaitDelay = 200 * time.Millisecond
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	err := subproc.Run(cmd)
	res := Result{}
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee) && ee.ExitCode() == 255:
		return res, &ErrUnreachable{Host: h.Name, Stderr: errb.String()}
	case errors.As(err, &ee):
		res.ExitCode = ee.ExitCode()
		return res, nil
	case ctx.Err() != nil:
		h.Drop()
		return res, &ErrUnreachable{Host: h.Name, Stderr: "no answer in time"}
	case errors.Is(err, exec.ErrWaitDelay):
		return res, nil
	case err != nil:
		return res, err
	}

	return res, nil
}

// Drop ends the master connection and removes its socket: a master whose
// link hangs is replaced by the next call instead of waited on.
func (h *Host) Drop() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	args := append(h.Options(), "-O", "exit", "--", h.Dest)
	cmd := exec.CommandContext(ctx, "ssh", args...)
	cmd.Env = subproc.Scrub(os.Environ(), nil)
	cmd.WaitDelay = 200 * time.Millisecond
	_ = subproc.Run(cmd)
	os.Remove(h.ControlPath())
}

// Fresh checks the master connection (`ssh -O check`, answered locally by
// the master) and removes a socket no master answers on, so the next call
// makes a new connection. It reports whether a live master was there.
func (h *Host) Fresh(ctx context.Context) bool {
	if _, err := os.Lstat(h.ControlPath()); err != nil {
		return false
	}

	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	args := append(h.Options(), "-O", "check", "--", h.Dest)
	cmd := exec.CommandContext(ctx, "ssh", args...)
	cmd.Env = subproc.Scrub(os.Environ(), nil)
	cmd.WaitDelay = 200 * time.Millisecond
	if err := subproc.Run(cmd); err != nil {
		os.Remove(h.ControlPath())
		return false
	}

	return true
}

// RemoteProgram is the shell text that runs the host's git-agency with
// args: the one `host install` put in ~/.local/bin, else the one on PATH,
// from the home directory, with the data directory the host's own
// configuration names.
func RemoteProgram(args ...string) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = shellQuote(a)
	}
	return `cd "$HOME" 2>/dev/null; p="$HOME/.local/bin/git-agency"; [ -x "$p" ] || p=git-agency; exec "$p" ` + strings.Join(q, " ")
}

// InstallPath is where `host install` puts git-agency on a host, relative
// to its home.
const InstallPath = ".local/bin/git-agency"

// shellQuote quotes s for a POSIX shell.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:,@%+") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// Quote is shellQuote for callers building remote command lines.
func Quote(s string) string { return shellQuote(s) }

// String names the host for messages.
func (h *Host) String() string { return fmt.Sprintf("%s (%s)", h.Name, h.Dest) }

// TerminalArgs is the ssh command line (ssh first) that runs the shell
// command line remote on the host in a terminal of its own (`ssh -t`: a
// headed agent's tmux session attached there), over the host's
// connection. It runs with this process's terminal.
func (h *Host) TerminalArgs(remote string) ([]string, error) {
	if err := CheckDest(h.Dest); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(h.ControlDir, 0o700); err != nil {
		return nil, err
	}
	return append(append([]string{"ssh"}, h.Options()...), "-t", "--", h.Dest, remote), nil
}

// Terminal is TerminalArgs as a command wired to this process's terminal.
func (h *Host) Terminal(remote string) (*subproc.Terminal, error) {
	argv, err := h.TerminalArgs(remote)
	if err != nil {
		return nil, err
	}
	return subproc.NewTerminal(argv, "", subproc.Scrub(os.Environ(), nil)), nil
}
