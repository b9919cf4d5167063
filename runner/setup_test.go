package runner

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/git-agency/git-agency/gitcore"
	"github.com/git-agency/git-agency/store"
)

// A supervisor cancelled during setup ends the setup script's children
// too, not only the script.
func TestRunSetupCancelKillsItsGroup(t *testing.T) {
	dir := t.TempDir()
	sandbox := filepath.Join(dir, "sandbox")
	st, rec := supervisedRecord(t, dir, &store.InvocationRecord{InvocationID: "20260101000000-5e70",
		Runner: "sh", Mode: store.ModeHeadless, Status: store.StatusStarting, SandboxPath: sandbox})
	inv := rec.InvocationID
	s := &Supervisor{Repo: &gitcore.Repo{Toplevel: dir}, Store: st, Invocation: inv, LockTimeout: 5 * time.Second}
	pidFile := filepath.Join(dir, "child.pid")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	got := make(chan int, 1)
	go func() {
		child := 0
		deadline := time.Now().Add(10 * time.Second)
		for time.Now().Before(deadline) {
			if b, err := os.ReadFile(pidFile); err == nil && strings.HasSuffix(string(b), "\n") {
				child, _ = strconv.Atoi(strings.TrimSpace(string(b)))
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		got <- child
		cancel()
	}()
	if s.runSetup(ctx, rec, "sleep 300 & echo $! > "+pidFile+"; wait") {
		t.Fatal("a cancelled setup succeeded")
	}
	child := <-got
	if child <= 0 {
		t.Fatal("the setup's child never started")
	}
	defer syscall.Kill(child, syscall.SIGKILL)
	deadline := time.Now().Add(10 * time.Second)
	for syscall.Kill(child, 0) == nil {
		if b, _ := os.ReadFile("/proc/" + strconv.Itoa(child) + "/stat"); strings.Contains(string(b), ") Z ") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the setup's child %d outlived the cancelled setup", child)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// supervisedRecord is a store under dir holding rec, with its invocation,
// logs and sandbox directories: what a Supervisor works on, no git.
func supervisedRecord(t *testing.T, dir string, rec *store.InvocationRecord) (*store.Store, *store.InvocationRecord) {
	t.Helper()
	st, err := store.Open(filepath.Join(dir, "data"), filepath.Join(dir, "common"))
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{rec.SandboxPath, st.InvocationDir(rec.InvocationID), st.SandboxLogsDir(rec.InvocationID)} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	rec.SchemaVersion, rec.RepoID = store.SchemaVersion, st.RepoID
	if err := st.WriteInvocation(rec); err != nil {
		t.Fatal(err)
	}
	return st, rec
}
