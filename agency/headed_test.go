package agency

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/git-agency/git-agency/store"
)

// Reconcile holds the repo lock while it asks tmux about a headed agent
// whose supervisor is gone; a tmux that never answers must not hold it (and
// every other command, which then fails with E_LOCKED) forever. The agent
// stays running (unsure) and the read returns within the bound.
func TestReconcileHeadedBoundsTmux(t *testing.T) {
	f := newLandFixture(t)
	bin := t.TempDir()
	if err := os.WriteFile(filepath.Join(bin, "tmux"), []byte("#!/bin/sh\nexec sleep 30\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	const id = "20260101000000-bbb1"
	os.MkdirAll(f.a.Store.InvocationDir(id), 0o700)
	rec := &store.InvocationRecord{SchemaVersion: store.SchemaVersion, InvocationID: id,
		IntegrationWorktreeID: f.wt.WorktreeID, RepoID: f.a.Store.RepoID,
		SandboxPath: f.a.Store.SandboxTreePath(id), SandboxBranch: store.SandboxBranch(id),
		Runner: "sh", Mode: store.ModeHeaded, TmuxSession: store.Str("agency-" + id),
		StartedAt: f.a.now(), Status: store.StatusRunning}
	if err := f.a.Store.WriteInvocation(rec); err != nil {
		t.Fatal(err)
	}
	done := make(chan *store.InvocationRecord, 1)
	start := time.Now()
	go func() { done <- f.a.Reconcile(context.Background(), rec) }()
	select {
	case got := <-done:
		if got.Status != store.StatusRunning {
			t.Errorf("status %s, want running (tmux could not tell)", got.Status)
		}
		if d := time.Since(start); d > reconcileTmuxWait+2*time.Second {
			t.Errorf("Reconcile took %v", d)
		}
	case <-time.After(reconcileTmuxWait + 5*time.Second):
		t.Fatal("Reconcile still waits on a tmux that never answers, holding the repo lock")
	}
	// The lock is free again.
	lock, err := f.a.Lock()
	if err != nil {
		t.Fatalf("lock after reconcile: %v", err)
	}
	lock.Unlock()
}
