package agency

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/git-agency/git-agency/runner"
	"github.com/git-agency/git-agency/store"
)

// syncBuffer is a stream a test reads while Follow writes to it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// logFixture is an App with one invocation record and its logs directory,
// written by hand (no supervisor, no runner).
type logFixture struct {
	t   *testing.T
	a   *App
	rec *store.InvocationRecord
}

func newLogFixture(t *testing.T, status string) *logFixture {
	t.Helper()
	a, err := Open(context.Background(), newRepo(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	id := "20260101000000-f011"
	rec := &store.InvocationRecord{SchemaVersion: store.SchemaVersion, InvocationID: id,
		RepoID: a.Store.RepoID, Runner: "sh", Mode: store.ModeHeadless, StartedAt: a.now(), Status: status}
	if status == store.StatusRunning {
		// This test process stands in for the supervisor: alive.
		pid := os.Getpid()
		st, _ := runner.StartTime(pid)
		rec.SupervisorPID, rec.SupervisorStartTime = &pid, &st
	}
	os.MkdirAll(a.Store.InvocationDir(id), 0o700)
	os.MkdirAll(a.Store.SandboxLogsDir(id), 0o700)
	f := &logFixture{t: t, a: a, rec: rec}
	f.write()
	return f
}

func (f *logFixture) write() {
	f.t.Helper()
	if err := f.a.Store.WriteInvocation(f.rec); err != nil {
		f.t.Fatal(err)
	}
}

func (f *logFixture) appendLog(name, text string) {
	f.t.Helper()
	p := filepath.Join(f.a.Store.SandboxLogsDir(f.rec.InvocationID), name)
	fh, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		f.t.Fatal(err)
	}
	fh.WriteString(text)
	fh.Close()
}

// waitFor waits up to 10s for cond.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

const toolCall = `{"time":"2026-01-01T00:00:00Z","line":1,"kind":"tool_call","summary":"Write hello.txt","source_type":"assistant/tool_use"}` + "\n"

// A followed run shows the setup's output while setup runs, then the
// readable events (not the JSONL), and ends with the run.
func TestFollowShowsSetupThenReadableEvents(t *testing.T) {
	f := newLogFixture(t, store.StatusRunning)
	f.rec.Runner = "claude" // a runner with a stream format
	f.write()
	var stdout, stderr syncBuffer
	done := make(chan error, 1)
	var final *store.InvocationRecord
	go func() {
		var err error
		final, err = f.a.Follow(context.Background(), f.rec.InvocationID,
			FollowOptions{Stdout: &stdout, Stderr: &stderr, Poll: 10 * time.Millisecond})
		done <- err
	}()
	f.appendLog(SetupLog, "installing deps\n")
	waitFor(t, "setup output on stderr", func() bool { return strings.Contains(stderr.String(), "installing deps\n") })

	f.appendLog(StreamLog, toolCall)
	waitFor(t, "a readable event on stdout", func() bool { return strings.Contains(stdout.String(), "Write hello.txt") })
	if strings.Contains(stdout.String(), `"kind"`) {
		t.Fatalf("stdout has raw JSONL: %q", stdout.String())
	}
	if !strings.Contains(stdout.String(), "tool_call") {
		t.Fatalf("stdout = %q, want the event kind", stdout.String())
	}

	code := 0
	f.rec.Status, f.rec.ExitCode, f.rec.ExitReason = store.StatusFinished, &code, store.Str(store.ExitExited)
	f.write()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Follow did not return after the run ended")
	}
	if final.Status != store.StatusFinished {
		t.Fatalf("final status %q", final.Status)
	}
}

// A run a timeout ended says so.
func TestFollowSaysTimeout(t *testing.T) {
	f := newLogFixture(t, store.StatusFailed)
	code := 130
	f.rec.ExitCode, f.rec.ExitReason = &code, store.Str(store.ExitTimeout)
	f.write()
	f.a.Store.AppendEvent(f.rec.InvocationID, "timeout", map[string]any{"reason": "no output for 1.5s"})
	f.appendLog(RawLog, "tick\n")
	var stdout, stderr bytes.Buffer
	rec, err := f.a.Follow(context.Background(), f.rec.InvocationID, FollowOptions{Stdout: &stdout, Stderr: &stderr})
	if err != nil {
		t.Fatal(err)
	}
	if stdout.String() != "tick\n" {
		t.Fatalf("stdout = %q", stdout.String())
	}
	want := "agent " + rec.InvocationID + ": stopped by a timeout (no output for 1.5s)\n"
	if stderr.String() != want {
		t.Fatalf("stderr = %q, want %q", stderr.String(), want)
	}
}

// A cancelled context ends following with its error; the agent runs on.
func TestFollowCancelled(t *testing.T) {
	f := newLogFixture(t, store.StatusRunning)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var out bytes.Buffer
	if _, err := f.a.Follow(ctx, f.rec.InvocationID, FollowOptions{Stdout: &out, Stderr: &out}); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

// logs of an agent that wrote only to stderr show the stderr.
func TestCopyLogsStderrOnly(t *testing.T) {
	f := newLogFixture(t, store.StatusFailed)
	f.appendLog(RawLog, "")
	f.appendLog(StderrLog, "fatal: no api key\n")
	var stdout, stderr bytes.Buffer
	f.a.CopyLogs(f.rec, LogReadable, &stdout, &stderr)
	if stdout.String() != "" || stderr.String() != "fatal: no api key\n" {
		t.Fatalf("stdout %q, stderr %q", stdout.String(), stderr.String())
	}
	// With output, stderr stays out of it.
	f.appendLog(RawLog, "done\n")
	stdout.Reset()
	stderr.Reset()
	f.a.CopyLogs(f.rec, LogReadable, &stdout, &stderr)
	if stdout.String() != "done\n" || stderr.String() != "" {
		t.Fatalf("stdout %q, stderr %q", stdout.String(), stderr.String())
	}
}

// watch's logs view: readable events, then stderr; a headed run's screen.
func TestLogText(t *testing.T) {
	f := newLogFixture(t, store.StatusFinished)
	f.appendLog(RawLog, `{"type":"assistant"}`+"\n")
	f.appendLog(StreamLog, toolCall)
	f.appendLog(StderrLog, "warn\n")
	got := f.a.LogText(context.Background(), f.rec, 1<<20)
	if strings.Contains(got, `"type"`) || !strings.Contains(got, "Write hello.txt") || !strings.HasSuffix(got, "── stderr.log ──\nwarn\n") {
		t.Fatalf("LogText = %q", got)
	}

	h := newLogFixture(t, store.StatusFinished)
	h.rec.Mode = store.ModeHeaded
	h.write()
	h.appendLog(runner.PaneLog, "\x1b[2J\x1b[Hhello\x1b[0m\r\n")
	h.appendLog(runner.ScreenLog, "hello\n$ \n")
	if got := h.a.LogText(context.Background(), h.rec, 1<<20); got != "hello\n$ \n" {
		t.Fatalf("headed LogText = %q, want the captured screen", got)
	}
}
