package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/git-agency/git-agency/agency"
	"github.com/git-agency/git-agency/internal/testrepo"
	"github.com/git-agency/git-agency/store"
)

// testEnv is an Env on a fresh repository whose streams are buffers (as
// gh's iostreams.Test()), so a test runs a command and reads what it
// printed.
func testEnv(t *testing.T) (*Env, *bytes.Buffer, *bytes.Buffer) {
	t.Helper()
	repo := testrepo.New(t)
	var stdout, stderr bytes.Buffer
	env := &Env{Ctx: context.Background(), Stdin: &bytes.Buffer{}, Stdout: &stdout, Stderr: &stderr, Dir: repo, Prog: "git agency"}
	return env, &stdout, &stderr
}

// finishedInvocation writes a finished headless invocation's record and
// logs by hand.
func finishedInvocation(t *testing.T, env *Env, logs map[string]string) string {
	t.Helper()
	a, err := env.App()
	if err != nil {
		t.Fatal(err)
	}
	id := "20260101000000-c111"
	os.MkdirAll(a.Store.InvocationDir(id), 0o700)
	os.MkdirAll(a.Store.SandboxLogsDir(id), 0o700)
	rec := &store.InvocationRecord{SchemaVersion: store.SchemaVersion, InvocationID: id, RepoID: a.Store.RepoID,
		Runner: "sh", Mode: store.ModeHeadless, StartedAt: "2026-01-01T00:00:00Z", Status: store.StatusFailed,
		ExitReason: store.Str(store.ExitExited)}
	if err := a.Store.WriteInvocation(rec); err != nil {
		t.Fatal(err)
	}
	for name, text := range logs {
		os.WriteFile(filepath.Join(a.Store.SandboxLogsDir(id), name), []byte(text), 0o600)
	}
	return id
}

func TestAgentLogsPrintsOutput(t *testing.T) {
	env, stdout, stderr := testEnv(t)
	id := finishedInvocation(t, env, map[string]string{agency.RawLog: "out\n", agency.StderrLog: "err\n"})
	if code := Run(env, &AgencyCLI{}, []string{"agent", "logs", id}); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if stdout.String() != "out\n" || stderr.String() != "" {
		t.Fatalf("stdout %q, stderr %q", stdout, stderr)
	}
	stdout.Reset()
	if code := Run(env, &AgencyCLI{}, []string{"agent", "logs", "--stderr", id}); code != 0 || stdout.String() != "err\n" {
		t.Fatalf("--stderr: exit %d, stdout %q", code, stdout)
	}
}

// An agent that wrote only to stderr: logs shows that stderr.
func TestAgentLogsStderrOnly(t *testing.T) {
	env, stdout, stderr := testEnv(t)
	id := finishedInvocation(t, env, map[string]string{agency.StderrLog: "fatal: no api key\n"})
	if code := Run(env, &AgencyCLI{}, []string{"agent", "logs", id}); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if stdout.String() != "" || stderr.String() != "fatal: no api key\n" {
		t.Fatalf("stdout %q, stderr %q", stdout, stderr)
	}
}

// logs --follow of an ended run prints everything and returns.
func TestAgentLogsFollowEnded(t *testing.T) {
	env, stdout, stderr := testEnv(t)
	id := finishedInvocation(t, env, map[string]string{agency.RawLog: "a\nb\n", agency.StderrLog: "warn\n"})
	if code := Run(env, &AgencyCLI{}, []string{"agent", "logs", "-f", id}); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if stdout.String() != "a\nb\n" || stderr.String() != "warn\n" {
		t.Fatalf("stdout %q, stderr %q", stdout, stderr)
	}
}
