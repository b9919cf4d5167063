package checkpoint

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/git-agency/git-agency/errs"
	"github.com/git-agency/git-agency/gitcore"
	"github.com/git-agency/git-agency/internal/testrepo"
	"github.com/git-agency/git-agency/internal/testsandbox"
	"github.com/git-agency/git-agency/store"
)

const testInv = testsandbox.Inv

// sandbox makes a repository with one commit, a store, an invocation
// directory and a sandbox worktree on agency/sandbox-<inv> with .agency/.
func sandbox(t *testing.T) Options {
	t.Helper()
	sb := testsandbox.New(t)
	return Options{Repo: sb.Repo, Store: sb.Store, Invocation: sb.Inv, SandboxPath: sb.Tree, IncludeUntracked: true}
}

func treeHas(t *testing.T, o Options, commit, path string) bool {
	t.Helper()
	return testrepo.TreeHas(t, o.SandboxPath, commit, path)
}

func TestTakeCheckpoint(t *testing.T) {
	o := sandbox(t)
	ctx := context.Background()
	o.Reason = store.CheckpointManual
	// Clean tree, no checkpoint yet: nothing to save.
	if cp, err := Take(ctx, o); cp != nil || err != nil {
		t.Fatalf("clean tree: %+v %v", cp, err)
	}
	testrepo.Write(t, o.SandboxPath, "a.txt", "changed\n")
	testrepo.Write(t, o.SandboxPath, "new/untracked.txt", "u\n")
	testrepo.Write(t, o.SandboxPath, ".agency/state/x", "private\n")
	testrepo.Git(t, o.SandboxPath, "status", "--porcelain") // refresh the index once
	index := testrepo.Git(t, o.SandboxPath, "ls-files", "-s", "--debug")
	head := testrepo.Git(t, o.SandboxPath, "rev-parse", "HEAD")

	cp, err := Take(ctx, o)
	if err != nil || cp == nil {
		t.Fatalf("checkpoint: %+v %v", cp, err)
	}
	if cp.ID != 1 || cp.HeadSHA != head || !cp.IncludesUntracked || cp.Reason != "manual" || cp.Diffstat != "+2 -1 in 2 files" {
		t.Errorf("record %+v", cp)
	}
	if got := testrepo.Git(t, o.SandboxPath, "rev-parse", cp.SnapshotRef); got != cp.SnapshotCommit {
		t.Errorf("ref %s = %s, record says %s", cp.SnapshotRef, got, cp.SnapshotCommit)
	}
	if testrepo.Git(t, o.SandboxPath, "rev-parse", cp.SnapshotCommit+"^") != head {
		t.Error("snapshot parent is not HEAD")
	}
	if !treeHas(t, o, cp.SnapshotCommit, "new/untracked.txt") || treeHas(t, o, cp.SnapshotCommit, ".agency/state/x") ||
		treeHas(t, o, cp.SnapshotCommit, ".agency/.gitignore") {
		t.Error("snapshot content wrong")
	}
	if testrepo.Git(t, o.SandboxPath, "ls-files", "-s", "--debug") != index || testrepo.Git(t, o.SandboxPath, "rev-parse", "HEAD") != head {
		t.Error("checkpoint touched the sandbox's index or HEAD")
	}
	// Unchanged: skipped.
	if cp, err := Take(ctx, o); cp != nil || err != nil {
		t.Fatalf("unchanged tree: %+v %v", cp, err)
	}
	// A supervisor killed between update-ref and the json write left ref 2.
	testrepo.Git(t, o.SandboxPath, "update-ref", store.SnapshotRef(testInv, 2), cp.SnapshotCommit)
	testrepo.Write(t, o.SandboxPath, "b.txt", "b\n")
	cp3, err := Take(ctx, o)
	if err != nil || cp3 == nil || cp3.ID != 3 {
		t.Fatalf("after an unrecorded ref: %+v %v", cp3, err)
	}
	list, err := List(ctx, o.Repo, o.Store, testInv)
	if err != nil || len(list) != 3 || list[1].ID != 2 || list[1].Reason != "unrecorded" || list[1].HeadSHA != head {
		t.Fatalf("list %+v %v", list, err)
	}
	file, _ := o.Store.ReadCheckpoints(testInv)
	if len(file.Checkpoints) != 2 {
		t.Errorf("checkpoints.json %+v", file)
	}
	evs, _ := o.Store.ReadEvents(testInv)
	if len(evs) != 2 || evs[0].Event != eventTaken {
		t.Errorf("events %+v", evs)
	}
	if err := deleteSnapshotRefs(ctx, o.Repo, testInv); err != nil {
		t.Fatal(err)
	}
	if refs, _ := o.Repo.ForEachRef(ctx, store.SnapshotRefPrefix(testInv)); len(refs) != 0 {
		t.Errorf("refs left: %v", refs)
	}
}

func TestTakeCheckpointDenylist(t *testing.T) {
	o := sandbox(t)
	ctx := context.Background()
	o.Denylist = []string{"*.secret"}
	testrepo.Write(t, o.SandboxPath, "a.txt", "changed\n")
	testrepo.Write(t, o.SandboxPath, ".env", "TOKEN=very-secret-token\n")
	testrepo.Write(t, o.SandboxPath, "x/y.secret", "custom-secret\n")
	_, err := Take(ctx, o)
	if !errs.Is(err, errs.EDenylisted) {
		t.Fatalf("want E_DENYLISTED, got %v", err)
	}
	evs, _ := o.Store.ReadEvents(testInv)
	if len(evs) != 1 || evs[0].Event != eventFailed || evs[0].Data["reason"] != "denylisted_file" ||
		fmt.Sprint(evs[0].Data["files"]) != "[.env x/y.secret]" {
		t.Errorf("events %+v", evs)
	}
	objs := testrepo.Git(t, o.SandboxPath, "cat-file", "--batch-all-objects", "--batch")
	if strings.Contains(objs, "very-secret-token") || strings.Contains(objs, "custom-secret") || strings.Contains(objs, "changed") {
		t.Error("a denylisted checkpoint wrote objects")
	}
	// Tracked-only snapshots do not look at untracked files.
	o.IncludeUntracked = false
	cp, err := Take(ctx, o)
	if err != nil || cp == nil || cp.IncludesUntracked || treeHas(t, o, cp.SnapshotCommit, ".env") {
		t.Fatalf("tracked-only: %+v %v", cp, err)
	}
	if strings.Contains(testrepo.Git(t, o.SandboxPath, "cat-file", "--batch-all-objects", "--batch"), "very-secret-token") {
		t.Error("secret in the object store")
	}
}

// observe records the directories c watches and reports when its Run has
// started (watches in place, start-up dirty check made).

func TestLeaveOutFromConfig(t *testing.T) {
	for v, want := range map[string]int64{"": DefaultMaxFileSize, "0": 0, "1024": 1024, "2k": 2048, "50m": 50 << 20, "1G": 1 << 30} {
		cfg := gitcore.NewConfig([]gitcore.ConfigEntry{{Key: "agency.checkpoint.maxfilesize", Value: v},
			{Key: "agency.checkpoint.exclude", Value: "*.bin"}, {Key: "agency.checkpoint.exclude", Value: "out/"}})
		pats, size, err := LeaveOutFromConfig(cfg)
		if err != nil || size != want || len(pats) != 2 {
			t.Errorf("%q: %v %d %v, want %d", v, pats, size, err, want)
		}
	}
	for _, v := range []string{"lots", "-1", "1t", "5mb"} {
		cfg := gitcore.NewConfig([]gitcore.ConfigEntry{{Key: "agency.checkpoint.maxFileSize", Value: v}})
		if _, _, err := LeaveOutFromConfig(cfg); err == nil {
			t.Errorf("%q accepted", v)
		}
	}
}

// takesNumber is a CommandRunner that, as the first update-ref is given
// its ref to create (its input, or its start when it has none), creates
// the snapshot ref number n itself: a writer outside the checkpoint lock
// that took the number the checkpoint had chosen.
type takesNumber struct {
	t      *testing.T
	ref    string
	commit string
	once   sync.Once
	done   atomic.Bool
	runs   atomic.Int32 // update-refs run
}

func (r *takesNumber) take(dir string) {
	r.once.Do(func() {
		testrepo.Git(r.t, dir, "update-ref", r.ref, r.commit)
		r.done.Store(true)
	})
}

func (r *takesNumber) Run(ctx context.Context, c gitcore.Cmd) (gitcore.Result, error) {
	if strings.Contains(strings.Join(c.Args, " "), "update-ref") {
		r.runs.Add(1)
		if c.Stdin == nil {
			r.take(c.Dir)
		} else {
			c.Stdin = &onFirstRead{r: c.Stdin, first: func() { r.take(c.Dir) }}
		}
	}
	return gitcore.ExecRunner{}.Run(ctx, c)
}

// onFirstRead calls first before the first read that returns data.
type onFirstRead struct {
	r     io.Reader
	first func()
	once  sync.Once
}

func (o *onFirstRead) Read(p []byte) (int, error) {
	n, err := o.r.Read(p)
	if n > 0 {
		o.once.Do(o.first)
	}
	return n, err
}

// When another writer creates checkpoint n while a checkpoint that chose
// n is being taken (its update-ref already started), the checkpoint takes
// the next free number: n's ref is left as the other writer made it, and
// the checkpoint's ref, record and diffstat are its own.
func TestTakeCheckpointNumberTaken(t *testing.T) {
	o := sandbox(t)
	ctx := context.Background()
	head := testrepo.Git(t, o.SandboxPath, "rev-parse", "HEAD")
	runner := &takesNumber{t: t, ref: store.SnapshotRef(o.Invocation, 1), commit: head}
	repo, err := gitcore.Discover(ctx, runner, o.Repo.Toplevel)
	if err != nil {
		t.Fatal(err)
	}
	o.Repo, o.Reason = repo, store.CheckpointManual
	testrepo.Write(t, o.SandboxPath, "a.txt", "changed\nand more\n")

	cp, err := Take(ctx, o)
	if err != nil || cp == nil {
		t.Fatalf("checkpoint: %+v %v", cp, err)
	}
	if !runner.done.Load() || runner.runs.Load() != 2 {
		t.Fatalf("update-ref ran %d times, want 2: n taken, then n+1", runner.runs.Load())
	}
	if cp.ID != 2 || cp.SnapshotRef != store.SnapshotRef(o.Invocation, 2) || cp.Diffstat != "+2 -1 in 1 file" || cp.HeadSHA != head {
		t.Fatalf("checkpoint = %+v, want number 2, +2 -1 in 1 file", cp)
	}
	if got := testrepo.Git(t, o.SandboxPath, "rev-parse", cp.SnapshotRef); got != cp.SnapshotCommit {
		t.Errorf("ref 2 = %s, want %s", got, cp.SnapshotCommit)
	}
	if got := testrepo.Git(t, o.SandboxPath, "rev-parse", store.SnapshotRef(o.Invocation, 1)); got != head {
		t.Errorf("ref 1 = %s, want the other writer's %s", got, head)
	}
	if msg := testrepo.Git(t, o.SandboxPath, "log", "-1", "--format=%s", cp.SnapshotRef); msg != fmt.Sprintf("agency snapshot %s 2", o.Invocation) {
		t.Errorf("commit message %q", msg)
	}
	file, err := o.Store.ReadCheckpoints(o.Invocation)
	if err != nil || len(file.Checkpoints) != 1 || file.Checkpoints[0].ID != 2 {
		t.Fatalf("checkpoints.json: %+v %v", file, err)
	}
}
