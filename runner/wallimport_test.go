package runner

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/git-agency/git-agency/gitcore"
	"github.com/git-agency/git-agency/internal/testrepo"
	"github.com/git-agency/git-agency/internal/testsandbox"
	"github.com/git-agency/git-agency/store"
	"github.com/git-agency/git-agency/wall"
)

// endAtSwap is a git runner that ends the run (cancel) just as the import
// task swaps the sandbox branch, then behaves as git killed in the middle
// of that swap would when the swap's context is cancelled: it leaves the
// ref's lock file behind.
type endAtSwap struct {
	ref, lock string
	cancel    context.CancelFunc
	once      sync.Once
	hit       chan struct{}
}

func (e *endAtSwap) Run(ctx context.Context, c gitcore.Cmd) (gitcore.Result, error) {
	if len(c.Args) > 1 && c.Args[1] == "update-ref" && strings.Contains(strings.Join(c.Args, " "), e.ref) {
		fired := false
		e.once.Do(func() { e.cancel(); close(e.hit); fired = true })
		if fired && ctx.Err() != nil {
			os.WriteFile(e.lock, nil, 0o644)
			return gitcore.Result{}, errors.New("signal: killed")
		}
	}
	return gitcore.ExecRunner{}.Run(ctx, c)
}

// The run ends (its context is cancelled) while the import task is in
// the middle of bringing the agent's commit in: the import still
// completes, the final import finds nothing in its way, and the commit is
// on the sandbox branch and recorded as imported.
func TestImportTaskNotCutOffByTheRunsEnd(t *testing.T) {
	dir := testrepo.New(t)
	const inv = "20260101000000-a1b2"
	branch := "agency/sandbox-" + inv
	testrepo.Git(t, dir, "branch", branch)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	fault := &endAtSwap{ref: "refs/heads/" + branch, lock: filepath.Join(dir, ".git", "refs", "heads", "agency", "sandbox-"+inv+".lock"),
		cancel: cancel, hit: make(chan struct{})}
	repo, err := gitcore.Discover(context.Background(), fault, dir)
	if err != nil {
		t.Fatal(err)
	}
	st, rec := supervisedRecord(t, t.TempDir(), &store.InvocationRecord{InvocationID: inv, Runner: "sh",
		Mode: store.ModeHeadless, Status: store.StatusRunning, SandboxPath: t.TempDir(),
		SandboxBranch: "refs/heads/" + branch, Isolation: wall.IsolateBwrap})
	shadow := wall.ShadowDir(st, inv)
	if err := wall.PrepareShadow(context.Background(), repo, shadow, t.TempDir(), branch); err != nil {
		t.Fatal(err)
	}
	s := &Supervisor{Store: st, Repo: repo, Invocation: inv, LockTimeout: 5 * time.Second}
	task := newImportTask(s, rec)
	task.interval = time.Millisecond
	task.Start(ctx)
	tip := testsandbox.ShadowCommit(t, repo, shadow, branch, "agent")
	<-fault.hit
	task.Stop(context.Background())
	// what the final checkpoint does first
	if _, err := wall.ImportShadow(context.Background(), repo, shadow, branch); err != nil {
		t.Fatalf("final import: %v", err)
	}
	if got := testrepo.Git(t, dir, "rev-parse", branch); got != tip {
		t.Fatalf("sandbox branch at %s, want the agent's commit %s", got, tip)
	}
	if b, _ := os.ReadFile(shadow + "-imported"); strings.TrimSpace(string(b)) != tip {
		t.Fatalf("recorded as imported: %q, want %s", b, tip)
	}
	if _, err := os.Stat(fault.lock); err == nil {
		t.Fatal("the sandbox branch's ref is left locked")
	}
}
