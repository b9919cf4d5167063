package host_test

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/git-agency/git-agency/host"
	"github.com/git-agency/git-agency/internal/sshdtest"
)

func testHost(t *testing.T, s *sshdtest.Sshd) *host.Host {
	return &host.Host{Name: "box", Dest: s.Alias, ConfigFile: s.ClientConfig, ControlDir: filepath.Join(s.Dir, "cm")}
}

// One call reaches the host with its own HOME, and leaves a master
// connection the next call reuses.
func TestRunOverOneConnection(t *testing.T) {
	s := sshdtest.Start(t)
	h := testHost(t, s)
	t.Cleanup(h.Drop)
	ctx := context.Background()
	res, err := h.Run(ctx, `echo "$HOME"; exit 3`, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(string(res.Stdout)); got != s.HostHome || res.ExitCode != 3 {
		t.Fatalf("got %q exit %d, want %q exit 3 (stderr %s)", got, res.ExitCode, s.HostHome, res.Stderr)
	}
	if !h.Fresh(ctx) {
		t.Fatal("no master connection after the first call")
	}
	res, err = h.Run(ctx, "cat", []byte("in"))
	if err != nil || string(res.Stdout) != "in" {
		t.Fatalf("stdin: %q %v", res.Stdout, err)
	}
}

// A socket no master answers on is found stale and replaced, not waited on.
func TestStaleControlSocketReplaced(t *testing.T) {
	s := sshdtest.Start(t)
	h := testHost(t, s)
	t.Cleanup(h.Drop)
	if err := os.MkdirAll(h.ControlDir, 0o700); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("unix", h.ControlPath())
	if err != nil {
		t.Fatal(err)
	}
	l.(*net.UnixListener).SetUnlinkOnClose(false)
	l.Close() // the file stays, nobody listens
	start := time.Now()
	if h.Fresh(context.Background()) {
		t.Fatal("a dead socket reads as a live master")
	}
	if _, err := h.Run(context.Background(), "true", nil); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("took %v", d)
	}
	if !h.Fresh(context.Background()) {
		t.Fatal("the stale socket was not replaced by a master")
	}
}

// A stopped server is unreachable at once, and a new master follows its
// return.
func TestUnreachableThenBack(t *testing.T) {
	s := sshdtest.Start(t)
	h := testHost(t, s)
	t.Cleanup(h.Drop)
	ctx := context.Background()
	if _, err := h.Run(ctx, "true", nil); err != nil {
		t.Fatal(err)
	}
	s.Stop()
	start := time.Now()
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	_, err := h.Run(cctx, "true", nil)
	var u *host.ErrUnreachable
	if !asUnreachable(err, &u) {
		t.Fatalf("want unreachable, got %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("took %v", d)
	}
	s.Restart()
	if _, err := h.Run(ctx, "true", nil); err != nil {
		t.Fatal(err)
	}
}

func asUnreachable(err error, u **host.ErrUnreachable) bool {
	return errors.As(err, u)
}

func TestDestBeginningWithDashRefused(t *testing.T) {
	for _, d := range []string{"-oProxyCommand=x", "", "a b"} {
		if host.CheckDest(d) == nil {
			t.Errorf("%q accepted", d)
		}
	}
	h := &host.Host{Name: "x", Dest: "-oProxyCommand=touch /tmp/pwned", ControlDir: t.TempDir()}
	if _, err := h.Run(context.Background(), "true", nil); !errors.Is(err, host.ErrBadDest) {
		t.Fatalf("got %v", err)
	}
}

// The attach of a headed agent on a host is `ssh -t` with the host's
// options (its config, the shared connection, BatchMode), to its
// destination, running the given command there; a destination ssh would
// read as an option is refused.
func TestTerminalArgs(t *testing.T) {
	dir := t.TempDir()
	h := &host.Host{Name: "box", Dest: "me@box.lan", ConfigFile: "/cfg", ControlDir: filepath.Join(dir, "cm")}
	remote := host.RemoteProgram("--repo", "/m", "agent", "attach", "ID")
	argv, err := h.TerminalArgs(remote)
	if err != nil {
		t.Fatal(err)
	}
	want := append(append([]string{"ssh"}, h.Options()...), "-t", "--", "me@box.lan", remote)
	if strings.Join(argv, "\x00") != strings.Join(want, "\x00") {
		t.Fatalf("got %q\nwant %q", argv, want)
	}
	for _, o := range []string{"-F /cfg", "BatchMode=yes", "ControlPath=" + h.ControlPath()} {
		if !strings.Contains(strings.Join(argv, " "), o) {
			t.Fatalf("%q lacks %s", argv, o)
		}
	}
	if !strings.Contains(remote, "exec \"$p\" --repo /m agent attach ID") {
		t.Fatalf("remote command: %s", remote)
	}
	term, err := h.Terminal(remote)
	if err != nil || strings.Join(term.Args(), "\x00") != strings.Join(want, "\x00") {
		t.Fatalf("Terminal: %v %q", err, term.Args())
	}
	bad := &host.Host{Name: "x", Dest: "-oProxyCommand=evil", ControlDir: dir}
	if _, err := bad.TerminalArgs(remote); !errors.Is(err, host.ErrBadDest) {
		t.Fatalf("a destination beginning with '-' was not refused: %v", err)
	}
}
