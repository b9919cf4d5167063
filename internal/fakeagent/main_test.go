package main

import (
	"bufio"
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/git-agency/git-agency/internal/testenv"
	"github.com/git-agency/git-agency/runner/stream"
)

// TestMain lets the tests run this test binary as the fake agent itself.
func TestMain(m *testing.M) {
	if os.Getenv("FAKEAGENT_AS_MAIN") == "1" {
		main()
	}
	os.Exit(testenv.Main(m))
}

// inDir runs the agent in-process in a fresh directory.
func inDir(t *testing.T, args ...string) (dir, stdout, stderr string, code int) {
	t.Helper()
	dir = t.TempDir()
	t.Chdir(dir)
	var out, errb bytes.Buffer
	code = run(append([]string{"fakeagent"}, args...), strings.NewReader(""), &out, &errb)
	return dir, out.String(), errb.String(), code
}

func TestWriteAppendPrint(t *testing.T) {
	t.Setenv("FAKE_VAR", "v1")
	dir, out, _, code := inDir(t, "-write", `a/b/c.txt=one\n`, "-append", "a/b/c.txt=two", "-print-cwd",
		"-print-env", "FAKE_VAR", "-print-env", "FAKE_UNSET_VAR", "-stdout", "hello", "-echo-prompt", "-exit", "7", "do the thing")
	if code != 7 {
		t.Fatalf("exit = %d", code)
	}
	b, err := os.ReadFile(filepath.Join(dir, "a/b/c.txt"))
	if err != nil || string(b) != "one\ntwo" {
		t.Fatalf("c.txt = %q, %v", b, err)
	}
	want := dir + "\nFAKE_VAR=v1\nFAKE_UNSET_VAR unset\nhello\ndo the thing\n"
	if out != want {
		t.Fatalf("stdout = %q, want %q", out, want)
	}
}

func TestPrintArgs(t *testing.T) {
	_, out, _, _ := inDir(t, "-print-args", "two words", `q"uote`)
	want := "arg: \"fakeagent\"\narg: \"-print-args\"\narg: \"two words\"\narg: \"q\\\"uote\"\n"
	if out != want {
		t.Fatalf("stdout = %q, want %q", out, want)
	}
}

func TestRunnerStatus(t *testing.T) {
	dir, _, _, code := inDir(t, "-runner-status", "needs_input:which DB: pg or mysql?")
	if code != 0 {
		t.Fatalf("exit = %d", code)
	}
	rs, err := stream.ReadRunnerStatus(dir)
	if err != nil || rs == nil || rs.Status != "needs_input" || rs.Summary != "which DB: pg or mysql?" {
		t.Fatalf("runner status = %+v, %v", rs, err)
	}
}

func TestUsageError(t *testing.T) {
	if _, _, _, code := inDir(t, "-no-such-flag"); code != 2 {
		t.Fatalf("exit = %d, want 2", code)
	}
	if _, _, _, code := inDir(t, "-stream", "gemini"); code != 2 {
		t.Fatalf("exit = %d, want 2", code)
	}
}

// The streams parse with the real parser into the expected events.
func TestStreams(t *testing.T) {
	tests := []struct {
		args  []string
		kinds string
		check func(t *testing.T, s stream.StreamState, u stream.Usage)
	}{
		{[]string{"-stream", "claude", "-write", "x.go=package x", "-append", "x.go=// more"},
			"session_start tool_call tool_result tool_call tool_result message result",
			func(t *testing.T, s stream.StreamState, u stream.Usage) {
				if !s.ResultSeen || s.ResultIsError || s.WaitingForUser || u.Turns != 3 {
					t.Errorf("state %+v usage %+v", s, u)
				}
			}},
		{[]string{"-stream", "claude", "-needs-input", "-sleep", "1ms"},
			"session_start message result",
			func(t *testing.T, s stream.StreamState, _ stream.Usage) {
				if !s.WaitingForUser {
					t.Errorf("not waiting for user: %+v", s)
				}
			}},
		{[]string{"-stream", "claude", "-exit", "1"},
			"session_start error result",
			func(t *testing.T, s stream.StreamState, _ stream.Usage) {
				if !s.ResultIsError {
					t.Errorf("not an error: %+v", s)
				}
			}},
		{[]string{"-stream", "codex", "-write", "x.go=package x", "-needs-input"},
			"session_start turn_start file_change message turn_end",
			func(t *testing.T, s stream.StreamState, u stream.Usage) {
				if !s.WaitingForUser || u.Turns != 1 || u.InputTokens != 20 {
					t.Errorf("state %+v usage %+v", s, u)
				}
			}},
		{[]string{"-stream", "codex", "-exit", "3"},
			"session_start turn_start error error",
			func(t *testing.T, s stream.StreamState, _ stream.Usage) {
				if !s.TurnFailed {
					t.Errorf("turn not failed: %+v", s)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			dir, out, _, _ := inDir(t, tt.args...)
			var events bytes.Buffer
			p := stream.NewParser("", &events)
			p.Write([]byte(out))
			p.Flush()
			var kinds []string
			sc := bufio.NewScanner(&events)
			for sc.Scan() {
				k, _, _ := strings.Cut(strings.TrimPrefix(sc.Text()[strings.Index(sc.Text(), `"kind":"`):], `"kind":"`), `"`)
				kinds = append(kinds, k)
			}
			if got := strings.Join(kinds, " "); got != tt.kinds {
				t.Errorf("kinds = %q, want %q\n%s", got, tt.kinds, out)
			}
			if !strings.Contains(out, `"cwd":"`+dir+`"`) && strings.Contains(out, `"subtype":"init"`) {
				t.Errorf("init has the wrong cwd:\n%s", out)
			}
			tt.check(t, p.State(), p.Usage())
		})
	}
}

func TestCommit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	for k, v := range map[string]string{"GIT_AUTHOR_NAME": "A", "GIT_AUTHOR_EMAIL": "a@x", "GIT_COMMITTER_NAME": "A", "GIT_COMMITTER_EMAIL": "a@x"} {
		t.Setenv(k, v)
	}
	dir := t.TempDir()
	t.Chdir(dir)
	if out, err := exec.Command("git", "init", "-q").CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	var out, errb bytes.Buffer
	code := run([]string{"fakeagent", "-stream", "codex", "-write", "f.txt=x", "-commit", "agent's work"}, strings.NewReader(""), &out, &errb)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	log, err := exec.Command("git", "log", "--format=%s", "--name-only").Output()
	if err != nil || string(log) != "agent's work\n\nf.txt\n" {
		t.Fatalf("git log = %q, %v", log, err)
	}
	if !strings.Contains(out.String(), `"type":"command_execution","command":"/bin/bash -lc 'git add -A && git commit -m`) {
		t.Fatalf("no command_execution in stream:\n%s", out.String())
	}
}

func TestInteractive(t *testing.T) {
	var out bytes.Buffer
	code := run([]string{"fakeagent", "-interactive"}, strings.NewReader("hi\nthere\nexit\nnot read\n"), &out, &out)
	if code != 0 || out.String() != "> echo: hi\n> echo: there\n> " {
		t.Fatalf("exit %d, output %q", code, out.String())
	}
}

// agentProc starts the test binary as the agent, returning its stdout.
func agentProc(t *testing.T, dir string, args ...string) (*exec.Cmd, *bufio.Reader) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "FAKEAGENT_AS_MAIN=1")
	cmd.Dir = dir
	pipe, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd, bufio.NewReader(pipe)
}

// waitExit waits for the process with a deadline and returns its exit code.
func waitExit(t *testing.T, cmd *exec.Cmd) int {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode()
		}
		if err != nil {
			t.Fatal(err)
		}
		return 0
	case <-time.After(20 * time.Second):
		t.Fatal("agent did not exit")
		return -1
	}
}

func readLine(t *testing.T, r *bufio.Reader) string {
	t.Helper()
	l, err := r.ReadString('\n') // bounded: the agent is killed at cleanup
	if err != nil {
		t.Fatalf("reading agent stdout: %v", err)
	}
	return strings.TrimSuffix(l, "\n")
}

func TestSignals(t *testing.T) {
	dir := t.TempDir()
	cmd, out := agentProc(t, dir, "-stdout", "ready", "-sleep", "1m")
	if l := readLine(t, out); l != "ready" {
		t.Fatalf("first line %q", l)
	}
	cmd.Process.Signal(syscall.SIGINT)
	if code := waitExit(t, cmd); code != 130 {
		t.Fatalf("SIGINT: exit %d, want 130", code)
	}

	// With -ignore-sigint it survives SIGINT (it still reacts to a file
	// created afterwards) and SIGTERM ends it with 143.
	flag := filepath.Join(dir, "go")
	cmd, out = agentProc(t, dir, "-ignore-sigint", "-stdout", "ready", "-wait-file", flag, "-stdout", "alive", "-sleep", "1m")
	readLine(t, out)
	cmd.Process.Signal(syscall.SIGINT)
	if err := os.WriteFile(flag, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if l := readLine(t, out); l != "alive" {
		t.Fatalf("after SIGINT: %q", l)
	}
	cmd.Process.Signal(syscall.SIGTERM)
	if code := waitExit(t, cmd); code != 143 {
		t.Fatalf("SIGINT ignored then SIGTERM: exit %d, want 143", code)
	}
}

func TestWaitFile(t *testing.T) {
	dir := t.TempDir()
	flag := filepath.Join(dir, "go")
	cmd, out := agentProc(t, dir, "-stdout", "waiting", "-wait-file", flag, "-stdout", "released", "-exit", "4")
	if l := readLine(t, out); l != "waiting" {
		t.Fatalf("first line %q", l)
	}
	if err := os.WriteFile(flag, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if l := readLine(t, out); l != "released" {
		t.Fatalf("second line %q", l)
	}
	if code := waitExit(t, cmd); code != 4 {
		t.Fatalf("exit %d, want 4", code)
	}
	if err := waitFile(filepath.Join(dir, "never"), 30*time.Millisecond); err == nil {
		t.Fatal("waitFile did not give up")
	}
}

// -resume continues a conversation saved by an earlier run: the same id, a
// final message that recalls the first prompt, cumulative totals (parsed
// as the supervisor would); an unknown id fails as claude does.
func TestResume(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	for _, format := range []string{"claude", "codex"} {
		t.Run(format, func(t *testing.T) {
			_, _, errb, code := inDir(t, "-stream", format, "-session-id", "s-"+format, "first prompt")
			if code != 0 {
				t.Fatalf("first run: exit %d: %s", code, errb)
			}
			_, out, errb, code := inDir(t, "-stream", format, "-resume", "s-"+format, "second prompt")
			if code != 0 {
				t.Fatalf("resumed run: exit %d: %s", code, errb)
			}
			p := stream.NewParser(format, nil)
			p.Write([]byte(out))
			p.Flush()
			st, u := p.State(), p.Usage()
			if st.SessionID != "s-"+format || st.LastMessage != "RECALL: first prompt was <<first prompt>>; 2 user prompts in history" {
				t.Errorf("state %+v", st)
			}
			if format == "codex" && u.InputTokens != 40 {
				t.Errorf("codex usage %+v, want the thread's 40 input tokens", u)
			}
			if format == "claude" && (u.CostUSD == nil || *u.CostUSD != 0.0007) {
				t.Errorf("claude usage %+v, want the session's cost 0.0007", u)
			}
		})
	}
	if _, _, errb, code := inDir(t, "-stream", "claude", "-resume", "nope", "p"); code != 1 || !strings.Contains(errb, "no conversation found with session ID: nope") {
		t.Errorf("unknown session: exit %d, %q", code, errb)
	}
}

func TestHookAndOSC(t *testing.T) {
	out := filepath.Join(t.TempDir(), "hook.in")
	settings := `{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"cat > '` + out + `'"}]}],` +
		`"SessionStart":[{"hooks":[{"type":"command","command":"exit 0"}]}]}}`
	_, stdout, stderr, code := inDir(t, "--settings", settings, "-hook", "SessionStart",
		"-hook", `Stop={"last_assistant_message":"done"}`, "-hook", "PreToolUse", "-osc", "blocked:permission", "hi")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"hook_event_name":"Stop"`, `"last_assistant_message":"done"`, `"session_id":"` + hookSession + `"`, `"cwd":"`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("hook stdin %s lacks %s", b, want)
		}
	}
	if want := "\x1b]7501;state=blocked:app=codex:kind=permission\x1b\\"; stdout != want {
		t.Errorf("stdout %q, want %q", stdout, want)
	}
}
