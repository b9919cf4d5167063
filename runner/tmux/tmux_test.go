package tmux

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/git-agency/git-agency/internal/testenv"
)

// The test binary doubles as the program run in panes: with
// TMUXTEST_HELPER=1 it records its argv, CWD and TMUXTEST_FOO to
// $TMUXTEST_OUT and exits with $TMUXTEST_EXIT.
func TestMain(m *testing.M) {
	if os.Getenv("TMUXTEST_HELPER") == "1" {
		os.Exit(helperMain())
	}
	os.Exit(testenv.Main(m))
}

type helperReport struct {
	Args []string
	Cwd  string
	Foo  string
	PWD  string
}

func helperMain() int {
	cwd, _ := os.Getwd()
	rep := helperReport{Args: os.Args[1:], Cwd: cwd, Foo: os.Getenv("TMUXTEST_FOO"), PWD: os.Getenv("PWD")}
	b, _ := json.Marshal(rep)
	out := os.Getenv("TMUXTEST_OUT")
	if err := os.WriteFile(out+".tmp", b, 0o600); err != nil {
		return 99
	}
	if err := os.Rename(out+".tmp", out); err != nil {
		return 99
	}
	code, _ := strconv.Atoi(os.Getenv("TMUXTEST_EXIT"))
	return code
}

// newTestClient starts nothing: it returns a Client on a private default
// server (TMUX_TMPDIR under /tmp, short enough for a unix socket path), with
// TMUX removed, and kills that server at cleanup.
func newTestClient(t *testing.T) *Client {
	t.Helper()
	testenv.Need(t, "tmux")
	p, err := Available()
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("/tmp", "tmx")
	if err != nil {
		t.Fatal(err)
	}
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if k == "TMUX" || k == "TMUX_PANE" || k == "TMUX_TMPDIR" || strings.HasPrefix(k, "TMUXTEST_") {
			continue
		}
		env = append(env, kv)
	}
	env = append(env, "TMUX_TMPDIR="+dir)
	c := &Client{Path: p, Env: env}
	t.Cleanup(func() {
		_, _ = c.run(context.Background(), "kill-server")
		_ = os.RemoveAll(dir)
	})
	return c
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, what string, cond func() (bool, error)) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		ok, err := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s (last error: %v)", what, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func waitDead(t *testing.T, c *Client, target string) PaneState {
	t.Helper()
	var st PaneState
	waitFor(t, "pane "+target+" to die", func() (bool, error) {
		var err error
		st, err = c.PaneState(context.Background(), target)
		if err == nil && !st.Dead {
			ps, _ := exec.Command("ps", "-o", "pid,ppid,stat,cmd", "-p", strconv.Itoa(st.PID)).CombinedOutput()
			err = fmt.Errorf("state %+v\n%s", st, ps)
		}
		return err == nil, err
	})
	return st
}

func helperExe(t *testing.T) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return exe
}

func TestNewSessionArgvVerbatimCwdEnv(t *testing.T) {
	c := newTestClient(t)
	ctx := context.Background()
	tmp := t.TempDir()
	dir := filepath.Join(tmp, "sand box #{session_name} 'q' ünï")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(tmp, "report.json")
	argv := []string{
		"a b", `it's "quoted"`, "$(touch pwned)", "`touch pwned2`", "line1\nline2",
		"ünïcode 日本 🚀", "x;", `y\;`, ";", `\;`, "", "-x", "--", "#{session_name}", "##", "*", "~",
		"$HOME", "{", "}", "\ttab", "kill-server;",
	}
	s, err := c.NewSession(ctx, SessionOptions{
		Name: "agency-argv",
		Dir:  dir,
		Argv: append([]string{helperExe(t)}, argv...),
		Env: []string{"TMUXTEST_HELPER=1", "TMUXTEST_OUT=" + out, "TMUXTEST_EXIT=0",
			"TMUXTEST_FOO=v a;l $(x) #{y} 'z'"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if s.ID == "" || !strings.HasPrefix(s.PaneID, "%") || s.PanePID <= 0 || s.Name != "agency-argv" {
		t.Fatalf("session = %+v", s)
	}
	st := waitDead(t, c, s.PaneID)
	if !st.HasStatus || st.ExitStatus != 0 {
		t.Fatalf("state = %+v", st)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var rep helperReport
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(rep.Args, argv) {
		t.Errorf("argv:\n got %q\nwant %q", rep.Args, argv)
	}
	if got, _ := filepath.EvalSymlinks(rep.Cwd); got != mustEval(t, dir) {
		t.Errorf("cwd = %q, want %q", rep.Cwd, dir)
	}
	if rep.PWD != dir {
		t.Errorf("PWD = %q, want %q", rep.PWD, dir)
	}
	if rep.Foo != "v a;l $(x) #{y} 'z'" {
		t.Errorf("env = %q", rep.Foo)
	}
	for _, f := range []string{"pwned", "pwned2"} {
		for _, d := range []string{dir, tmp} {
			if _, err := os.Stat(filepath.Join(d, f)); err == nil {
				t.Errorf("%s was created in %s", f, d)
			}
		}
	}
	// kill-server; was not run: the session is still there.
	if ok, err := c.HasSession(ctx, "agency-argv"); !ok || err != nil {
		t.Fatalf("HasSession = %v, %v", ok, err)
	}
}

func mustEval(t *testing.T, p string) string {
	t.Helper()
	r, err := filepath.EvalSymlinks(p)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestInstantExitStatusKept(t *testing.T) {
	c := newTestClient(t)
	ctx := context.Background()
	for i := range 5 {
		name := fmt.Sprintf("agency-exit%d", i)
		s, err := c.NewSession(ctx, SessionOptions{Name: name, Dir: t.TempDir(),
			Argv: []string{"/bin/sh", "-c", "exit 7"}})
		if err != nil {
			t.Fatal(err)
		}
		st := waitDead(t, c, s.PaneID)
		if !st.HasStatus || st.ExitStatus != 7 || st.HasSignal {
			t.Fatalf("state = %+v", st)
		}
		// The session name works as a target too.
		st2, err := c.PaneState(ctx, PaneTarget(name))
		if err != nil || st2.PaneID != st.PaneID || st2.ExitStatus != st.ExitStatus || !st2.Dead {
			t.Fatalf("by name: %+v, %v; by id: %+v", st2, err, st)
		}
	}
	// A single-word program (tmux would hand a lone argument to a shell).
	s, err := c.NewSession(ctx, SessionOptions{Name: "agency-single", Dir: t.TempDir(), Argv: []string{"false"}})
	if err != nil {
		t.Fatal(err)
	}
	if st := waitDead(t, c, s.PaneID); !st.HasStatus || st.ExitStatus != 1 {
		t.Fatalf("state = %+v", st)
	}
}

func TestPipePaneLogAndCapture(t *testing.T) {
	c := newTestClient(t)
	ctx := context.Background()
	logDir := filepath.Join(t.TempDir(), "logs #{x} 'q'")
	if err := os.Mkdir(logDir, 0o700); err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(logDir, "pane.log")
	if err := os.WriteFile(log, []byte("previous\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// 3000 lines: more than tmux's default history of 2000. The program
	// waits for a line before exiting: tmux 3.3a can drop the tail of a
	// burst written just before the program exits (see pipePane).
	s, err := c.NewSession(ctx, SessionOptions{Name: "agency-log", Dir: t.TempDir(), LogPath: log,
		Argv: []string{"/bin/sh", "-c", `i=1; while [ $i -le 3000 ]; do echo "line $i"; i=$((i+1)); done; read _; exit 3`}})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "log to hold the last line", func() (bool, error) {
		b, err := os.ReadFile(log)
		if err == nil && !bytes.Contains(b, []byte("line 3000\r\n")) {
			err = fmt.Errorf("%d bytes, ends %q", len(b), b[max(0, len(b)-60):])
		}
		return err == nil, err
	})
	if err := c.SendKeys(ctx, s.PaneID, "Enter"); err != nil {
		t.Fatal(err)
	}
	if st := waitDead(t, c, s.PaneID); st.ExitStatus != 3 {
		t.Fatalf("state = %+v", st)
	}
	b, _ := os.ReadFile(log)
	if !bytes.HasPrefix(b, []byte("previous\nline 1\r\n")) {
		t.Errorf("log does not start with the old content then the first line: %q", b[:min(len(b), 40)])
	}
	capt, err := c.CapturePane(ctx, s.PaneID)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(capt, []byte("line 1\n")) || !bytes.Contains(capt, []byte("line 3000\n")) ||
		!bytes.Contains(capt, []byte("Pane is dead (status 3")) {
		t.Errorf("capture: %d bytes, starts %q", len(capt), capt[:min(len(capt), 40)])
	}

	// pipePane on a running pane: typed text echoes back into the log.
	s2, err := c.NewSession(ctx, SessionOptions{Name: "agency-cat", Dir: t.TempDir(), Argv: []string{"cat"}})
	if err != nil {
		t.Fatal(err)
	}
	log2 := filepath.Join(logDir, "cat.log")
	if err := c.pipePane(ctx, s2.PaneID, log2); err != nil {
		t.Fatal(err)
	}
	if err := c.sendText(ctx, s2.PaneID, "hello; $(x) 'q'"); err != nil {
		t.Fatal(err)
	}
	if err := c.SendKeys(ctx, s2.PaneID, "Enter"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "cat.log to hold the typed line", func() (bool, error) {
		b, err := os.ReadFile(log2)
		return bytes.Count(b, []byte("hello; $(x) 'q'")) == 2, err // the echo and cat's copy
	})
}

// PasteText reaches a program that asked for bracketed paste as one
// bracketed paste, newlines kept, so an Enter sent after it submits
// instead of joining the paste (codex's TUI).
func TestPasteTextBracketed(t *testing.T) {
	c := newTestClient(t)
	ctx := context.Background()
	dir := t.TempDir()
	out := filepath.Join(dir, "in")
	text := "one\n$(two) 'q'"
	want := "\x1b[200~" + text + "\x1b[201~"
	script := fmt.Sprintf(`stty raw -echo; printf '\033[?2004hready'; dd bs=1 count=%d of=%s 2>/dev/null`, len(want), out)
	s, err := c.NewSession(ctx, SessionOptions{Name: "agency-paste", Dir: dir, Argv: []string{"sh", "-c", script}})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the program to ask for bracketed paste", func() (bool, error) {
		b, err := c.CapturePane(ctx, s.PaneID)
		return bytes.Contains(b, []byte("ready")), err
	})
	if err := c.PasteText(ctx, s.PaneID, text); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the program to read the paste", func() (bool, error) {
		b, _ := os.ReadFile(out) // absent until dd opens it
		return len(b) == len(want), nil
	})
	if b, _ := os.ReadFile(out); string(b) != want {
		t.Errorf("read %q, want %q", b, want)
	}
}

func TestSendCtrlCStopsProgram(t *testing.T) {
	c := newTestClient(t)
	ctx := context.Background()
	s, err := c.NewSession(ctx, SessionOptions{Name: "agency-sleep", Dir: t.TempDir(), Argv: []string{"sleep", "1000"}})
	if err != nil {
		t.Fatal(err)
	}
	// C-c typed before the program owns the terminal is lost: wait for it.
	waitFor(t, "sleep to run", func() (bool, error) {
		st, err := c.PaneState(ctx, s.PaneID)
		return err == nil && st.Command == "sleep" && !st.Dead && st.PID == s.PanePID, err
	})
	if err := c.SendCtrlC(ctx, s.PaneID); err != nil {
		t.Fatal(err)
	}
	st := waitDead(t, c, s.PaneID)
	if !st.HasSignal || st.Signal != 2 || st.HasStatus {
		t.Fatalf("state = %+v", st)
	}
}

func TestHasSessionExactAndKill(t *testing.T) {
	c := newTestClient(t)
	ctx := context.Background()
	if _, err := c.NewSession(ctx, SessionOptions{Name: "agency-12", Dir: t.TempDir(), Argv: []string{"sleep", "1000"}}); err != nil {
		t.Fatal(err)
	}
	if ok, err := c.HasSession(ctx, "agency-1"); ok || err != nil {
		t.Fatalf("agency-1: %v, %v", ok, err)
	}
	if err := c.KillSession(ctx, "agency-1"); !errors.Is(err, ErrNotFound) || errors.Is(err, ErrNoServer) {
		t.Fatalf("kill agency-1: %v", err)
	}
	if _, err := c.PaneState(ctx, PaneTarget("agency-1")); !errors.Is(err, ErrNotFound) {
		t.Fatalf("PaneState agency-1: %v", err)
	}
	if _, err := c.NewSession(ctx, SessionOptions{Name: "agency-1", Dir: t.TempDir(), Argv: []string{"sleep", "1000"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.NewSession(ctx, SessionOptions{Name: "other", Dir: t.TempDir(), Argv: []string{"sleep", "1000"}}); err != nil {
		t.Fatal(err)
	}
	names, err := c.ListSessions(ctx, "agency-")
	if err != nil || !reflect.DeepEqual(names, []string{"agency-1", "agency-12"}) {
		t.Fatalf("ListSessions = %q, %v", names, err)
	}
	if err := c.KillSession(ctx, "agency-1"); err != nil {
		t.Fatal(err)
	}
	if ok, _ := c.HasSession(ctx, "agency-1"); ok {
		t.Fatal("agency-1 survived kill")
	}
	if ok, _ := c.HasSession(ctx, "agency-12"); !ok {
		t.Fatal("agency-12 was killed with agency-1")
	}
}

func TestDuplicateSessionLeavesOriginal(t *testing.T) {
	c := newTestClient(t)
	ctx := context.Background()
	s, err := c.NewSession(ctx, SessionOptions{Name: "agency-dup", Dir: t.TempDir(), Argv: []string{"sleep", "1000"}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.NewSession(ctx, SessionOptions{Name: "agency-dup", Dir: t.TempDir(), Argv: []string{"sleep", "1000"}})
	var te *Error
	if !errors.As(err, &te) || !strings.Contains(te.Stderr, "duplicate session") {
		t.Fatalf("second NewSession: %v", err)
	}
	st, err := c.PaneState(ctx, s.PaneID)
	if err != nil || st.Dead {
		t.Fatalf("original: %+v, %v", st, err)
	}
}

func TestNoServer(t *testing.T) {
	c := newTestClient(t)
	ctx := context.Background()
	if names, err := c.ListSessions(ctx, ""); err != nil || len(names) != 0 {
		t.Fatalf("ListSessions = %q, %v", names, err)
	}
	if ok, err := c.HasSession(ctx, "agency-x"); ok || err != nil {
		t.Fatalf("HasSession = %v, %v", ok, err)
	}
	err := c.KillSession(ctx, "agency-x")
	if !errors.Is(err, ErrNoServer) || !errors.Is(err, ErrNotFound) {
		t.Fatalf("KillSession = %v", err)
	}
	if _, err := c.PaneState(ctx, "%0"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("PaneState = %v", err)
	}
	if _, err := c.CapturePane(ctx, "%0"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("CapturePane = %v", err)
	}
	// NewSession starts the server.
	if _, err := c.NewSession(ctx, SessionOptions{Name: "agency-x", Dir: t.TempDir(), Argv: []string{"sleep", "1000"}}); err != nil {
		t.Fatal(err)
	}
	if names, err := c.ListSessions(ctx, ""); err != nil || len(names) != 1 {
		t.Fatalf("ListSessions = %q, %v", names, err)
	}
}

func TestWindowSizeAndHistory(t *testing.T) {
	c := newTestClient(t)
	ctx := context.Background()
	s, err := c.NewSession(ctx, SessionOptions{Name: "agency-size", Dir: t.TempDir(), Width: 123, Height: 45,
		Argv: []string{"sleep", "1000"}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := c.run(ctx, "list-panes", "-s", "-t", sessionTarget(s.Name),
		"-F", "#{pane_id} #{window_width}x#{window_height} #{history_limit} #{remain-on-exit}")
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("%s 123x45 %d on\n", s.PaneID, defaultHistoryLimit)
	if string(res.Stdout) != want { // one pane: the placeholder is gone
		t.Fatalf("panes = %q, want %q", res.Stdout, want)
	}
}

func TestInsideTmuxStillUsesDefaultServer(t *testing.T) {
	c := newTestClient(t)
	ctx := context.Background()
	if _, err := c.NewSession(ctx, SessionOptions{Name: "agency-in", Dir: t.TempDir(), Argv: []string{"sleep", "1000"}}); err != nil {
		t.Fatal(err)
	}
	sock, err := c.socketPath(ctx, "agency-in")
	if err != nil || !strings.HasSuffix(sock, "/default") {
		t.Fatalf("socketPath = %q, %v", sock, err)
	}
	// $TMUX naming some other server must not redirect our commands.
	other := &Client{Path: c.Path, Env: append(append([]string{}, c.Env...),
		"TMUX=/nonexistent/tmux-0/other,1,0", "TMUX_PANE=%9")}
	if ok, err := other.HasSession(ctx, "agency-in"); !ok || err != nil {
		t.Fatalf("HasSession with foreign TMUX = %v, %v", ok, err)
	}
	cmd, err := other.AttachOrSwitchCmd(ctx, "agency-in")
	if err != nil {
		t.Fatal(err)
	}
	if got := cmd.Args()[1:]; !reflect.DeepEqual(got, []string{"attach-session", "-t", "=agency-in"}) {
		t.Fatalf("foreign server: %q", got)
	}
	for _, kv := range cmd.Env() {
		if strings.HasPrefix(kv, "TMUX=") {
			t.Fatalf("attach keeps %s", kv)
		}
	}
	// Inside a client of our own server: switch, keeping TMUX.
	same := &Client{Path: c.Path, Env: append(append([]string{}, c.Env...), "TMUX="+sock+",1,0")}
	cmd, err = same.AttachOrSwitchCmd(ctx, "agency-in")
	if err != nil {
		t.Fatal(err)
	}
	if got := cmd.Args()[1:]; !reflect.DeepEqual(got, []string{"set-option", "-t", "=agency-in:", "detach-on-destroy", "off", ";",
		"set-option", "-t", "=agency-in:", returnOption, "1", ";", "switch-client", "-t", "=agency-in"}) {
		t.Fatalf("same server: %q", got)
	}
	// ... and the way back is bound: prefix then d.
	res, err := c.run(ctx, "list-keys", "-T", "prefix", "d")
	if err != nil || !strings.Contains(string(res.Stdout), returnCondition) || !strings.Contains(string(res.Stdout), "detach-client") {
		t.Fatalf("prefix d: %q, %v", res.Stdout, err)
	}
	// Not inside tmux: attach.
	cmd, _ = c.AttachOrSwitchCmd(ctx, "agency-in")
	if cmd.Args()[1] != "attach-session" {
		t.Fatalf("outside: %q", cmd.Args())
	}
}

func TestValidation(t *testing.T) {
	c := &Client{Path: "/nonexistent/tmux"}
	ctx := context.Background()
	dir := t.TempDir()
	for _, o := range []SessionOptions{
		{Name: "", Dir: dir, Argv: []string{"x"}},
		{Name: "a.b", Dir: dir, Argv: []string{"x"}},
		{Name: "a#{x}", Dir: dir, Argv: []string{"x"}},
		{Name: "ok", Dir: "rel", Argv: []string{"x"}},
		{Name: "ok", Dir: filepath.Join(dir, "missing"), Argv: []string{"x"}},
		{Name: "ok", Dir: dir},
		{Name: "ok", Dir: dir, Argv: []string{""}},
		{Name: "ok", Dir: dir, Argv: []string{"x"}, Env: []string{"NOEQUALS"}},
		{Name: "ok", Dir: dir, Argv: []string{"x"}, Env: []string{"1X=y"}},
		{Name: "ok", Dir: dir, Argv: []string{"x"}, LogPath: "rel.log"},
	} {
		if _, err := c.NewSession(ctx, o); err == nil || errors.As(err, new(*exec.Error)) {
			t.Errorf("%+v: err = %v, want a validation error", o, err)
		}
	}
}

func TestAvailableNotFound(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	_, err := Available()
	var nf *NotFoundError
	if !errors.As(err, &nf) {
		t.Fatalf("Available = %v", err)
	}
	var c Client
	if _, err := c.HasSession(context.Background(), "x"); !errors.As(err, &nf) {
		t.Fatalf("HasSession = %v", err)
	}
}

func TestStartGuardRefusesMissingDir(t *testing.T) {
	cmd := exec.Command("/bin/sh", "-c", startGuard, "sh", "/nonexistent/dir", "touch", "pwned")
	cmd.Dir = t.TempDir()
	err := cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != exitStartDir {
		t.Fatalf("guard: %v", err)
	}
	if _, err := os.Stat(filepath.Join(cmd.Dir, "pwned")); err == nil {
		t.Fatal("program ran outside its directory")
	}
}

// A user inside tmux who switched to an agent's session (agent attach) is
// taken back to a session of theirs when the agent's session ends, not
// detached from tmux: a real client, attached through script(1) for a
// terminal, follows the switch and then comes back.
func TestSwitchedClientComesBackWhenSessionEnds(t *testing.T) {
	c := newTestClient(t)
	script := testenv.Need(t, "script")
	ctx := context.Background()
	for _, name := range []string{"me", "agency-sw"} {
		if _, err := c.NewSession(ctx, SessionOptions{Name: name, Dir: t.TempDir(), Argv: []string{"sleep", "1000"}}); err != nil {
			t.Fatal(err)
		}
	}
	client := exec.Command(script, "-qfc", c.Path+" attach-session -t =me", "/dev/null")
	client.Env = c.Env
	in, err := client.StdinPipe() // open and silent: the client reads no keys
	if err != nil {
		t.Fatal(err)
	}
	if err := client.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = c.run(context.Background(), "kill-server")
		in.Close()
		_ = client.Wait()
	})
	clients := func() string {
		res, err := c.run(ctx, "list-clients", "-F", "#{session_name}")
		if err != nil {
			return ""
		}
		return strings.TrimSpace(string(res.Stdout))
	}
	waitFor(t, "a client on me", func() (bool, error) { return clients() == "me", nil })
	sock, err := c.socketPath(ctx, "me")
	if err != nil {
		t.Fatal(err)
	}
	res, err := c.run(ctx, "display-message", "-p", "-t", "=me:", "#{session_id}")
	if err != nil {
		t.Fatal(err)
	}
	// $TMUX as a pane of "me" has it: socket, server pid, session number.
	tmuxEnv := fmt.Sprintf("TMUX=%s,1,%s", sock, strings.TrimPrefix(strings.TrimSpace(string(res.Stdout)), "$"))
	inside := &Client{Path: c.Path, Env: append(append([]string{}, c.Env...), tmuxEnv)}
	cmd, err := inside.AttachOrSwitchCmd(ctx, "agency-sw")
	if err != nil {
		t.Fatal(err)
	}
	var errb bytes.Buffer
	cmd.SetStdio(nil, io.Discard, &errb)
	if err := cmd.Run(); err != nil {
		t.Fatalf("switch: %v: %s", err, errb.String())
	}
	waitFor(t, "the client on agency-sw", func() (bool, error) { return clients() == "agency-sw", nil })
	if err := c.KillSession(ctx, "agency-sw"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the client back on me", func() (bool, error) {
		got := clients()
		if got == "" {
			return false, errors.New("the client was detached from tmux")
		}
		return got == "me", nil
	})
}

// The way back keeps the key's own binding as its other branch: tmux's
// default, a user's (with -r), none; bound twice, it is wrapped once.
func TestBindReturnKeepsTheBinding(t *testing.T) {
	c := newTestClient(t)
	ctx := context.Background()
	if _, err := c.NewSession(ctx, SessionOptions{Name: "agency-b", Dir: t.TempDir(), Argv: []string{"sleep", "1000"}}); err != nil {
		t.Fatal(err)
	}
	keys := func() string {
		t.Helper()
		res, err := c.run(ctx, "list-keys", "-T", "prefix", "d")
		if err != nil {
			return ""
		}
		return strings.TrimSpace(string(res.Stdout))
	}
	for _, tc := range []struct {
		bind []string
		kept string
	}{
		{nil, `"switch-client -l" detach-client`},
		{[]string{"bind-key", "-r", "-T", "prefix", "d", "display-message", "mine; and more"}, `mine; and more`},
		{[]string{"unbind-key", "-T", "prefix", "d"}, `"switch-client -l"`},
	} {
		if tc.bind != nil {
			if _, err := c.run(ctx, tc.bind...); err != nil {
				t.Fatal(err)
			}
		}
		before := keys()
		for range 2 {
			if err := c.bindReturn(ctx); err != nil {
				t.Fatal(err)
			}
		}
		after := keys()
		if strings.Count(after, returnOption) != 1 || !strings.Contains(after, tc.kept) ||
			strings.Contains(before, " -r ") != strings.Contains(after, " -r ") {
			t.Fatalf("before %q, after %q", before, after)
		}
	}
}

func TestBoundCommand(t *testing.T) {
	for in, want := range map[string]string{
		"bind-key    -T prefix       d                    detach-client\n": "detach-client",
		`bind-key -r -T prefix d display-message "a  b"`:                   `display-message "a  b"`,
		"unknown key: d":                        "",
		"bind-key -T prefix dd detach-client":   "",
		"bind-key -T copy-mode d detach-client": "",
	} {
		if _, got := boundCommand(in); got != want {
			t.Errorf("%q: %q, want %q", in, got, want)
		}
	}
}
