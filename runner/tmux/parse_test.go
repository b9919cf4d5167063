package tmux

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestEscapeArg(t *testing.T) {
	for in, want := range map[string]string{
		"":       "",
		"a":      "a",
		";":      `\;`,
		"x;":     `x\;`,
		`y\;`:    `y\\;`,
		"a;b":    "a;b",
		"#{x}":   "#{x}",
		"a; ; ;": `a; ; \;`,
	} {
		if got := escapeArg(in); got != want {
			t.Errorf("escapeArg(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestShellQuoteAndPipeCommand(t *testing.T) {
	if got := shellQuote(`it's`); got != `'it'\''s'` {
		t.Errorf("shellQuote = %s", got)
	}
	if got := pipeCommand(`/l #{x}/a'b.log`); got != `exec cat >> '/l ##{x}/a'\''b.log'` {
		t.Errorf("pipeCommand = %s", got)
	}
}

func TestParsePaneStates(t *testing.T) {
	out := []byte("%1|0|100|1|7||9|0|sh\n%2|1|200|1||15|9|0|claude\n" +
		"%3|0|300|0|||9|1|my|prog\n%5|0|500|1|||9|0|\n%6|0|600|0|0||9|1|x\n")
	cases := []struct {
		target string
		want   PaneState
		ok     bool
	}{
		{"%1", PaneState{PaneID: "%1", PID: 100, Dead: true, Closed: true, ExitStatus: 7, HasStatus: true, Command: "sh", serverPID: 9}, true},
		{"=s:", PaneState{PaneID: "%2", PID: 200, Dead: true, Closed: true, Signal: 15, HasSignal: true, Command: "claude", serverPID: 9}, true},
		{"%5", PaneState{PaneID: "%5", PID: 500, Closed: true, serverPID: 9}, true},                               // EOF before reaping
		{"%6", PaneState{PaneID: "%6", PID: 600, HasStatus: true, Piped: true, Command: "x", serverPID: 9}, true}, // reaped, output not drained
		{"%3", PaneState{PaneID: "%3", PID: 300, Piped: true, Command: "my|prog", serverPID: 9}, true},
		{"%4", PaneState{}, false},
	}
	for _, c := range cases {
		got, ok, err := parsePaneStates(out, c.target)
		if err != nil || ok != c.ok || got != c.want {
			t.Errorf("%s: %+v %v %v, want %+v", c.target, got, ok, err, c.want)
		}
	}
	if _, _, err := parsePaneStates([]byte("garbage\n"), "%1"); err == nil {
		t.Error("garbage parsed")
	}
}

func TestParseNewSession(t *testing.T) {
	s, err := parseNewSession([]byte("$3\n@5|%7|4242\n"))
	if err != nil || !reflect.DeepEqual(s, Session{ID: "$3", WindowID: "@5", PaneID: "%7", PanePID: 4242}) {
		t.Fatalf("%+v, %v", s, err)
	}
	s, err = parseNewSession([]byte("$3\n"))
	if err == nil || s.ID != "$3" {
		t.Fatalf("partial: %+v, %v", s, err)
	}
	if s, _ := parseNewSession(nil); s.ID != "" {
		t.Fatalf("empty: %+v", s)
	}
}

func TestErrorClassification(t *testing.T) {
	cases := []struct {
		stderr             string
		noServer, notFound bool
	}{
		{"no server running on /tmp/tmux-0/default\n", true, true},
		{"error connecting to /tmp/x/tmux-0/default (No such file or directory)\n", true, true},
		{"can't find session: agency-1\n", false, true},
		{"can't find pane: %9\n", false, true},
		{"no such window: =zz:^\n", false, true},
		{"duplicate session: agency-1\n", false, false},
	}
	for _, c := range cases {
		var err error = &Error{Args: []string{"x"}, ExitCode: 1, Stderr: c.stderr}
		if errors.Is(err, ErrNoServer) != c.noServer || errors.Is(err, ErrNotFound) != c.notFound {
			t.Errorf("%q: noServer=%v notFound=%v", c.stderr, errors.Is(err, ErrNoServer), errors.Is(err, ErrNotFound))
		}
	}
}

// fakeRunner records calls and answers from a script.
type fakeRunner struct {
	calls   [][]string
	respond func(args []string) (Result, error)
}

func (f *fakeRunner) Run(_ context.Context, c Cmd) (Result, error) {
	f.calls = append(f.calls, c.Args)
	for _, kv := range c.Env {
		if strings.HasPrefix(kv, "TMUX=") || strings.HasPrefix(kv, "TMUX_PANE=") {
			return Result{}, errors.New("TMUX leaked into " + kv)
		}
	}
	return f.respond(c.Args)
}

func TestNewSessionPartialFailureKillsByID(t *testing.T) {
	f := &fakeRunner{respond: func(args []string) (Result, error) {
		if args[0] == "kill-session" {
			return Result{}, nil
		}
		// new-session worked, new-window failed.
		return Result{Stdout: []byte("$42\n"), ExitCode: 1},
			&Error{Args: args, ExitCode: 1, Stderr: "create window failed"}
	}}
	c := &Client{Path: "tmux", Runner: f, Env: []string{"TMUX=/tmp/tmux-0/default,1,0", "TMUX_PANE=%1", "HOME=/h"}}
	_, err := c.NewSession(context.Background(), SessionOptions{Name: "agency-x", Dir: t.TempDir(), Argv: []string{"x"}})
	if err == nil {
		t.Fatal("no error")
	}
	if len(f.calls) != 2 || !reflect.DeepEqual(f.calls[1], []string{"kill-session", "-t", "$42"}) {
		t.Fatalf("calls = %q", f.calls)
	}
	// The separators are bare ";" and nothing else is.
	n := 0
	for _, a := range f.calls[0] {
		if a == ";" {
			n++
		}
	}
	if n != 3 {
		t.Fatalf("%d separators in %q", n, f.calls[0])
	}
}

func TestNewSessionDuplicateDoesNotKill(t *testing.T) {
	f := &fakeRunner{respond: func(args []string) (Result, error) {
		return Result{ExitCode: 1}, &Error{Args: args, ExitCode: 1, Stderr: "duplicate session: agency-x\n"}
	}}
	c := &Client{Path: "tmux", Runner: f, Env: []string{}}
	if _, err := c.NewSession(context.Background(), SessionOptions{Name: "agency-x", Dir: t.TempDir(), Argv: []string{"x"}}); err == nil {
		t.Fatal("no error")
	}
	if len(f.calls) != 1 {
		t.Fatalf("calls = %q", f.calls)
	}
}

// deadlineRunner answers like fakeRunner and records whether each call had
// a deadline.
type deadlineRunner struct {
	fakeRunner
	deadlines []bool
}

func (f *deadlineRunner) Run(ctx context.Context, c Cmd) (Result, error) {
	_, ok := ctx.Deadline()
	f.deadlines = append(f.deadlines, ok)
	return f.fakeRunner.Run(ctx, c)
}

// When the half-made session cannot be removed, the agent it may already
// run is not supervised by anyone: the error says so (with the session id)
// instead of dropping the kill's failure, and the kill is bounded in time
// even when the caller's context has no deadline.
func TestNewSessionReportsAHalfMadeSessionItCannotKill(t *testing.T) {
	f := &deadlineRunner{fakeRunner: fakeRunner{respond: func(args []string) (Result, error) {
		if args[0] == "kill-session" {
			return Result{ExitCode: 1}, &Error{Args: args, ExitCode: 1, Stderr: "server busy"}
		}
		return Result{Stdout: []byte("$42\n"), ExitCode: 1},
			&Error{Args: args, ExitCode: 1, Stderr: "create window failed"}
	}}}
	c := &Client{Path: "tmux", Runner: f, Env: []string{}}
	_, err := c.NewSession(context.Background(), SessionOptions{Name: "agency-x", Dir: t.TempDir(), Argv: []string{"x"}})
	if err == nil {
		t.Fatal("no error")
	}
	if msg := err.Error(); !strings.Contains(msg, "create window failed") || !strings.Contains(msg, "$42") || !strings.Contains(msg, "server busy") {
		t.Fatalf("error %q does not say the session $42 was left behind", msg)
	}
	if len(f.deadlines) != 2 || !f.deadlines[1] {
		t.Fatalf("kill-session without a deadline: %v", f.deadlines)
	}
	// A session already gone is no failure of the cleanup.
	f2 := &fakeRunner{respond: func(args []string) (Result, error) {
		if args[0] == "kill-session" {
			return Result{ExitCode: 1}, &Error{Args: args, ExitCode: 1, Stderr: "can't find session: $42"}
		}
		return Result{Stdout: []byte("$42\n"), ExitCode: 1},
			&Error{Args: args, ExitCode: 1, Stderr: "create window failed"}
	}}
	c = &Client{Path: "tmux", Runner: f2, Env: []string{}}
	_, err = c.NewSession(context.Background(), SessionOptions{Name: "agency-x", Dir: t.TempDir(), Argv: []string{"x"}})
	if err == nil || strings.Contains(err.Error(), "left behind") {
		t.Fatalf("error %v", err)
	}
}

// CallTimeout puts a deadline on every call, whatever the caller's context.
func TestClientCallTimeout(t *testing.T) {
	f := &deadlineRunner{fakeRunner: fakeRunner{respond: func(args []string) (Result, error) { return Result{}, nil }}}
	c := &Client{Path: "tmux", Runner: f, Env: []string{}}
	c.HasSession(context.Background(), "agency-x")
	c.CallTimeout = time.Second
	c.HasSession(context.Background(), "agency-x")
	if len(f.deadlines) != 2 || f.deadlines[0] || !f.deadlines[1] {
		t.Fatalf("deadlines = %v, want [false true]", f.deadlines)
	}
}
