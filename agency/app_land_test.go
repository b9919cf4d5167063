package agency

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/git-agency/git-agency/errs"
	"github.com/git-agency/git-agency/gitcore"
	"github.com/git-agency/git-agency/store"
)

// landFixture is a repository with one integration worktree "feat" and
// helpers to make finished invocations with sandboxes by hand (no runner).
type landFixture struct {
	t    *testing.T
	ctx  context.Context
	repo string
	a    *App
	wt   *store.WorktreeRecord
}

func newLandFixture(t *testing.T) *landFixture {
	t.Helper()
	repo := newRepo(t)
	for _, kv := range [][2]string{{"user.name", "Tester"}, {"user.email", "t@example.com"}} {
		gitOut(t, repo, "config", kv[0], kv[1])
	}
	os.WriteFile(filepath.Join(repo, "a.txt"), []byte("one\ntwo\nthree\n"), 0o644)
	gitOut(t, repo, "add", "a.txt")
	gitOut(t, repo, "commit", "-qm", "a")
	ctx := context.Background()
	a, err := Open(ctx, repo, nil)
	if err != nil {
		t.Fatal(err)
	}
	wt, err := a.CreateWorktree(ctx, CreateWorktreeOptions{Name: "feat"})
	if err != nil {
		t.Fatal(err)
	}
	return &landFixture{t: t, ctx: ctx, repo: repo, a: a, wt: wt}
}

// sandbox creates a finished invocation whose sandbox ran script (sh -c).
func (f *landFixture) sandbox(id, script string) *store.InvocationRecord {
	f.t.Helper()
	lock, err := f.a.Lock()
	if err != nil {
		f.t.Fatal(err)
	}
	base, err := f.a.CreateSandbox(f.ctx, f.wt, id)
	lock.Unlock()
	if err != nil {
		f.t.Fatal(err)
	}
	tree := f.a.Store.SandboxTreePath(id)
	rec := &store.InvocationRecord{SchemaVersion: store.SchemaVersion, InvocationID: id,
		IntegrationWorktreeID: f.wt.WorktreeID, RepoID: f.a.Store.RepoID, SandboxPath: tree,
		SandboxBranch: store.SandboxBranch(id), BaseCommit: base, Runner: "sh", Mode: store.ModeHeadless,
		StartedAt: f.a.now(), Status: store.StatusFinished, LandingStatus: store.Str(store.LandingPending)}
	os.MkdirAll(f.a.Store.InvocationDir(id), 0o700)
	if err := f.a.Store.WriteInvocation(rec); err != nil {
		f.t.Fatal(err)
	}
	f.sh(tree, script)
	return rec
}

func (f *landFixture) sh(dir, script string) {
	f.t.Helper()
	cmd := exec.Command("sh", "-c", script)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		f.t.Fatalf("%s: %v\n%s", script, err, out)
	}
}

func (f *landFixture) read(id string) *store.InvocationRecord {
	rec, err := f.a.Store.ReadInvocation(id)
	if err != nil {
		f.t.Fatal(err)
	}
	return rec
}

const (
	inv1 = "20260101000000-aaa1"
	inv2 = "20260101000000-aaa2"
)

func TestLandCommitsOntoMovingHead(t *testing.T) {
	f := newLandFixture(t)
	f.sandbox(inv1, "echo x > x.txt && git add x.txt && git commit -qm x && echo y > y.txt && git add y.txt && git commit -qm y")
	f.sandbox(inv2, "sed -i s/three/THREE/ a.txt && git commit -qam three")
	res, err := f.a.Land(f.ctx, LandOptions{Query: inv1})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Written) != 2 || res.Applied {
		t.Fatalf("res = %+v", res)
	}
	// The second sandbox started from the old HEAD: it lands on the new one.
	if _, err := f.a.Land(f.ctx, LandOptions{Query: inv2, RequireBase: true}); !errs.Is(err, errs.EBaseMoved) {
		t.Fatalf("require-base: err = %v", err)
	}
	if _, err := f.a.Land(f.ctx, LandOptions{Query: inv2}); err != nil {
		t.Fatal(err)
	}
	log := gitOut(t, f.wt.TreePath, "log", "--format=%s", "-4")
	if log != "three\ny\nx\na\n" {
		t.Errorf("log = %q", log)
	}
	if st := gitOut(t, f.wt.TreePath, "status", "--porcelain"); st != "" {
		t.Errorf("status = %q", st)
	}
	rec := f.read(inv2)
	if store.Deref(rec.LandingStatus) != store.LandingLanded || rec.Land == nil || rec.Land.State != LandDone {
		t.Errorf("record = %+v", rec)
	}
	if _, err := os.Stat(f.a.Store.SandboxTreePath(inv2)); !os.IsNotExist(err) {
		t.Error("sandbox tree kept")
	}
	if ok, _ := f.a.Repo.BranchExists(f.ctx, store.SandboxBranch(inv2)); !ok {
		t.Error("sandbox branch deleted")
	}
	if _, err := f.a.Land(f.ctx, LandOptions{Query: inv2}); !errs.Is(err, errs.EAlreadyLanded) {
		t.Errorf("land again: %v", err)
	}
}

func TestLandApplyIncludesUntracked(t *testing.T) {
	f := newLandFixture(t)
	f.sandbox(inv1, "sed -i s/one/ONE/ a.txt && echo new > new.txt && mkdir -p d && echo deep > d/e.txt")
	if _, err := f.a.Land(f.ctx, LandOptions{Query: inv1}); !errs.Is(err, errs.EUnlandedChanges) {
		t.Fatalf("without --apply: %v", err)
	}
	check, err := f.a.CheckLand(f.ctx, LandOptions{Query: inv1, Apply: true})
	if err != nil || !check.Clean {
		t.Fatalf("check: %+v %v", check, err)
	}
	res, err := f.a.Land(f.ctx, LandOptions{Query: inv1, Apply: true})
	if err != nil || !res.Applied {
		t.Fatalf("%+v %v", res, err)
	}
	if s := gitOut(t, f.wt.TreePath, "log", "-1", "--format=%s"); s != "agency: land invocation "+inv1+"\n" {
		t.Errorf("subject %q", s)
	}
	files := gitOut(t, f.wt.TreePath, "show", "--name-only", "--format=", "HEAD")
	if files != "a.txt\nd/e.txt\nnew.txt\n" {
		t.Errorf("files = %q", files)
	}
}

func TestLandCommitsAndUncommitted(t *testing.T) {
	f := newLandFixture(t)
	f.sandbox(inv1, "echo c > c.txt && git add c.txt && git commit -qm c && echo u > u.txt")
	if _, err := f.a.Land(f.ctx, LandOptions{Query: inv1}); !errs.Is(err, errs.EUnlandedChanges) {
		t.Fatalf("err = %v", err)
	}
	if _, err := os.Stat(f.a.Store.SandboxTreePath(inv1)); err != nil {
		t.Fatal("sandbox removed after a refused land")
	}
	res, err := f.a.Land(f.ctx, LandOptions{Query: inv1, Apply: true})
	if err != nil || len(res.Written) != 2 {
		t.Fatalf("%+v %v", res, err)
	}
}

func TestLandDenylisted(t *testing.T) {
	f := newLandFixture(t)
	f.sandbox(inv1, "echo s > .env && echo k > x.key && echo ok > ok.txt")
	_, err := f.a.Land(f.ctx, LandOptions{Query: inv1, Apply: true})
	if !errs.Is(err, errs.EDenylisted) || !strings.Contains(strings.Join(errs.As(err).Detail, ","), ".env") {
		t.Fatalf("err = %v", err)
	}
	d, err := f.a.Diff(f.ctx, inv1, gitcoreDiff())
	if err != nil || len(d.Denied) != 2 || strings.Join(d.UncommittedFiles, ",") != "ok.txt" {
		t.Fatalf("diff = %+v %v", d, err)
	}
}

func TestLandConflictTouchesNothing(t *testing.T) {
	f := newLandFixture(t)
	f.sandbox(inv1, "sed -i s/two/TWO-1/ a.txt && git commit -qam one")
	f.sandbox(inv2, "sed -i s/two/TWO-2/ a.txt && git commit -qam two")
	if _, err := f.a.Land(f.ctx, LandOptions{Query: inv1}); err != nil {
		t.Fatal(err)
	}
	head := gitOut(t, f.wt.TreePath, "rev-parse", "HEAD")
	check, err := f.a.CheckLand(f.ctx, LandOptions{Query: inv2})
	if err != nil || check.Clean || strings.Join(check.Conflicts, ",") != "a.txt" {
		t.Fatalf("check = %+v %v", check, err)
	}
	_, err = f.a.Land(f.ctx, LandOptions{Query: inv2})
	if !errs.Is(err, errs.ELandConflict) || !strings.Contains(strings.Join(errs.As(err).Detail, ","), "a.txt") {
		t.Fatalf("err = %v", err)
	}
	if h := gitOut(t, f.wt.TreePath, "rev-parse", "HEAD"); h != head {
		t.Error("HEAD moved")
	}
	if st := gitOut(t, f.wt.TreePath, "status", "--porcelain"); st != "" {
		t.Errorf("status = %q", st)
	}
	rec := f.read(inv2)
	if store.Deref(rec.LandingStatus) != store.LandingPending || rec.Land != nil {
		t.Errorf("record = %+v", rec)
	}
	if _, err := os.Stat(f.a.Store.SandboxTreePath(inv2)); err != nil {
		t.Error("sandbox removed")
	}
}

func TestLandRefusals(t *testing.T) {
	f := newLandFixture(t)
	f.sandbox(inv1, "true")
	if _, err := f.a.Land(f.ctx, LandOptions{Query: inv1}); !errs.Is(err, errs.ENothingToLand) {
		t.Errorf("nothing: %v", err)
	}
	f.sandbox(inv2, "echo z > z.txt && git add z.txt && git commit -qm z")
	os.WriteFile(filepath.Join(f.wt.TreePath, "a.txt"), []byte("mine\n"), 0o644)
	if _, err := f.a.Land(f.ctx, LandOptions{Query: inv2}); !errs.Is(err, errs.EDirtyWorktree) {
		t.Errorf("dirty: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(f.wt.TreePath, "a.txt")); string(b) != "mine\n" {
		t.Error("user change lost")
	}
	f.sh(f.wt.TreePath, "git checkout -q a.txt")
	f.a.Store.UpdateInvocation(f.a.LockTimeout, inv2, func(r *store.InvocationRecord) error {
		r.Status = store.StatusRunning
		r.SupervisorPID = store.Int(os.Getpid())
		return nil
	})
	if _, err := f.a.Land(f.ctx, LandOptions{Query: inv2}); !errs.Is(err, errs.EInvocationRunning) {
		t.Errorf("running: %v", err)
	}
}

// A land killed at any point is finished or reported on the next read and
// never applied twice.
func TestLandInterrupted(t *testing.T) {
	for _, fp := range []string{FPLandBeforeUpdate, FPLandAfterUpdate, FPLandAfterRemove} {
		t.Run(fp, func(t *testing.T) {
			f := newLandFixture(t)
			f.sandbox(inv1, "echo x > x.txt && git add x.txt && git commit -qm x")
			f.a.Failpoint = func(step string) error {
				if step == fp {
					return errs.New(errs.EInternal, "", "killed at %s", step)
				}
				return nil
			}
			if _, err := f.a.Land(f.ctx, LandOptions{Query: inv1}); err == nil {
				t.Fatal("no failure")
			}
			f.a.Failpoint = nil
			rec := f.a.RecoverLand(f.ctx, f.read(inv1))
			if rec.Land == nil || rec.Land.State == LandInProgress || rec.Land.Note == "" {
				t.Fatalf("land = %+v", rec.Land)
			}
			if fp == FPLandBeforeUpdate {
				if rec.Land.State != LandInterrupted {
					t.Fatalf("state %s", rec.Land.State)
				}
				if _, err := f.a.Land(f.ctx, LandOptions{Query: inv1}); err != nil {
					t.Fatal(err)
				}
			} else if store.Deref(rec.LandingStatus) != store.LandingLanded {
				t.Fatalf("record = %+v", rec)
			}
			if n := gitOut(t, f.wt.TreePath, "rev-list", "--count", "HEAD"); n != "3\n" {
				t.Errorf("commits = %s", n)
			}
			if _, err := os.Stat(f.a.Store.SandboxTreePath(inv1)); !os.IsNotExist(err) {
				t.Error("sandbox tree kept")
			}
		})
	}
}

func TestDiscardFinished(t *testing.T) {
	f := newLandFixture(t)
	f.sandbox(inv1, "echo x > x.txt && git add x.txt && git commit -qm x")
	gitOut(t, f.repo, "update-ref", store.SnapshotRefPrefix(inv1)+"1", "HEAD")
	res, err := f.a.Discard(f.ctx, inv1)
	if err != nil || store.Deref(res.Invocation.LandingStatus) != store.LandingDiscarded {
		t.Fatalf("%+v %v", res, err)
	}
	// The snapshot refs stay until gc, for undo.
	if out := gitOut(t, f.repo, "for-each-ref", store.SnapshotRefPrefix(inv1)); out == "" {
		t.Error("snapshot refs removed")
	}
	if _, err := os.Stat(f.a.Store.SandboxTreePath(inv1)); !os.IsNotExist(err) {
		t.Error("sandbox tree kept")
	}
	if _, err := f.a.Land(f.ctx, LandOptions{Query: inv1}); !errs.Is(err, errs.ENothingToLand) {
		t.Errorf("land discarded: %v", err)
	}
}

func TestWorktreeRmWithRunningInvocation(t *testing.T) {
	f := newLandFixture(t)
	f.sandbox(inv1, "true")
	// A live supervisor (this test process) keeps the record running.
	f.a.Store.UpdateInvocation(f.a.LockTimeout, inv1, func(r *store.InvocationRecord) error {
		r.Status = store.StatusRunning
		r.SupervisorPID = store.Int(os.Getpid())
		return nil
	})
	if _, err := f.a.RemoveWorktree(f.ctx, RemoveWorktreeOptions{Query: "feat"}); !errs.Is(err, errs.EHasInvocations) {
		t.Fatalf("err = %v", err)
	}
}

func gitcoreDiff() gitcore.DiffOptions { return gitcore.DiffOptions{} }

// The fast-forward of the integration tree fails (read-tree refuses, or
// the compare-and-swap update-ref of HEAD fails after the files were
// written): the integration tree and its branch are exactly as before, the
// error names git's failure, the record forgets the attempt and the land
// can simply be run again.
func TestLandFastForwardFails(t *testing.T) {
	for _, step := range []string{"read-tree -m -u", "update-ref -m"} {
		t.Run(step, func(t *testing.T) {
			f := newLandFixture(t)
			f.sandbox(inv1, "echo x > x.txt && sed -i s/two/TWO/ a.txt && git add x.txt && git commit -qam x")
			branch := "refs/heads/" + f.wt.Branch
			beforeHead := gitOut(t, f.wt.TreePath, "rev-parse", "HEAD", branch)
			beforeIndex := gitOut(t, f.wt.TreePath, "ls-files", "-s")
			beforeA, _ := os.ReadFile(filepath.Join(f.wt.TreePath, "a.txt"))

			a, err := Open(f.ctx, f.repo, &failingRunner{match: step, n: 1})
			if err != nil {
				t.Fatal(err)
			}
			_, err = a.Land(f.ctx, LandOptions{Query: inv1})
			if !errs.Is(err, errs.EGit) || !strings.Contains(err.Error(), "injected") || !strings.Contains(err.Error(), strings.Fields(step)[0]) {
				t.Fatalf("err = %v, want the injected %s failure", err, step)
			}
			if got := gitOut(t, f.wt.TreePath, "rev-parse", "HEAD", branch); got != beforeHead {
				t.Errorf("HEAD and branch moved: %q, were %q", got, beforeHead)
			}
			if got := gitOut(t, f.wt.TreePath, "ls-files", "-s"); got != beforeIndex {
				t.Errorf("index changed:\n%s\nwas\n%s", got, beforeIndex)
			}
			if st := gitOut(t, f.wt.TreePath, "status", "--porcelain", "--untracked-files=all"); st != "" {
				t.Errorf("integration tree changed: %q", st)
			}
			if got, _ := os.ReadFile(filepath.Join(f.wt.TreePath, "a.txt")); string(got) != string(beforeA) {
				t.Errorf("a.txt = %q, was %q", got, beforeA)
			}
			rec := f.read(inv1)
			if rec.Land != nil || store.Deref(rec.LandingStatus) != store.LandingPending {
				t.Fatalf("record: land %+v, landing_status %s", rec.Land, store.Deref(rec.LandingStatus))
			}
			if _, err := os.Stat(f.a.Store.SandboxTreePath(inv1)); err != nil {
				t.Fatalf("sandbox tree gone: %v", err)
			}
			if _, err := f.a.Land(f.ctx, LandOptions{Query: inv1}); err != nil {
				t.Fatalf("land again: %v", err)
			}
			if got := gitOut(t, f.wt.TreePath, "log", "--format=%s", "-2"); got != "x\na\n" {
				t.Errorf("log after the second land = %q", got)
			}
		})
	}
}

// Untracked files in the integration tree in the way of the land: git
// refuses, the land reports E_DIRTY_WORKTREE (decided from status, not
// from git's wording) and leaves everything as it was.
func TestLandBlockedByUntrackedFile(t *testing.T) {
	f := newLandFixture(t)
	f.sandbox(inv1, "echo x > x.txt && git add x.txt && git commit -qm x")
	os.WriteFile(filepath.Join(f.wt.TreePath, "x.txt"), []byte("mine\n"), 0o644)
	before := gitOut(t, f.wt.TreePath, "rev-parse", "HEAD")
	_, err := f.a.Land(f.ctx, LandOptions{Query: inv1})
	if !errs.Is(err, errs.EDirtyWorktree) || !strings.Contains(err.Error(), "would overwrite files") {
		t.Fatalf("err = %v, want E_DIRTY_WORKTREE", err)
	}
	if got := gitOut(t, f.wt.TreePath, "rev-parse", "HEAD"); got != before {
		t.Errorf("HEAD moved")
	}
	if got, _ := os.ReadFile(filepath.Join(f.wt.TreePath, "x.txt")); string(got) != "mine\n" {
		t.Errorf("x.txt = %q", got)
	}
	if rec := f.read(inv1); rec.Land != nil {
		t.Errorf("land = %+v", rec.Land)
	}
}

// diskFullRunner fails the first `read-tree -m -u` the way a full disk
// does: part of the checkout is written (a new file, a changed one, a new
// directory), then git dies with ENOSPC before it writes the index.
type diskFullRunner struct {
	tree string
	done bool
}

func (d *diskFullRunner) Run(ctx context.Context, c gitcore.Cmd) (gitcore.Result, error) {
	if !d.done && strings.Contains(strings.Join(c.Args, " "), "read-tree -m -u") {
		d.done = true
		os.WriteFile(filepath.Join(d.tree, "x.txt"), []byte("x\n"), 0o644)
		os.WriteFile(filepath.Join(d.tree, "a.txt"), []byte("one\nTWO\n"), 0o644)
		os.MkdirAll(filepath.Join(d.tree, "new", "deep"), 0o755)
		os.WriteFile(filepath.Join(d.tree, "new", "deep", "n.txt"), []byte("half"), 0o644)
		stderr := "error: unable to write file new/deep/n.txt: No space left on device\nfatal: unable to write new index file"
		return gitcore.Result{ExitCode: 128}, &gitcore.GitError{Args: c.Args, ExitCode: 128, Stderr: stderr}
	}
	return gitcore.ExecRunner{}.Run(ctx, c)
}

// A full disk during `land --apply`: read-tree writes
// part of the land and fails. The integration tree is left exactly as it
// was (no landed file, no changed file, no new directory), and the same
// land succeeds once space is back.
func TestLandDiskFullLeavesTreeAsItWas(t *testing.T) {
	f := newLandFixture(t)
	f.sandbox(inv1, "echo x > x.txt && sed -i s/two/TWO/ a.txt && mkdir -p new/deep && echo n > new/deep/n.txt")
	os.WriteFile(filepath.Join(f.wt.TreePath, "mine.txt"), []byte("the user's untracked file\n"), 0o644)
	beforeHead := gitOut(t, f.wt.TreePath, "rev-parse", "HEAD")
	beforeIndex := gitOut(t, f.wt.TreePath, "ls-files", "-s")
	beforeStatus := gitOut(t, f.wt.TreePath, "status", "--porcelain", "--untracked-files=all")

	a, err := Open(f.ctx, f.repo, &diskFullRunner{tree: f.wt.TreePath})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Land(f.ctx, LandOptions{Query: inv1, Apply: true}); err == nil || !strings.Contains(err.Error(), "No space left") {
		t.Fatalf("err = %v, want the disk-full failure", err)
	}
	if got := gitOut(t, f.wt.TreePath, "rev-parse", "HEAD"); got != beforeHead {
		t.Errorf("HEAD moved")
	}
	if got := gitOut(t, f.wt.TreePath, "ls-files", "-s"); got != beforeIndex {
		t.Errorf("index changed:\n%s", got)
	}
	if got := gitOut(t, f.wt.TreePath, "status", "--porcelain", "--untracked-files=all"); got != beforeStatus {
		t.Errorf("integration tree changed: %q, was %q", got, beforeStatus)
	}
	if _, err := os.Stat(filepath.Join(f.wt.TreePath, "new")); !os.IsNotExist(err) {
		t.Errorf("new/ left behind: %v", err)
	}
	if got, _ := os.ReadFile(filepath.Join(f.wt.TreePath, "mine.txt")); string(got) != "the user's untracked file\n" {
		t.Errorf("mine.txt = %q", got)
	}
	if rec := f.read(inv1); rec.Land != nil || store.Deref(rec.LandingStatus) != store.LandingPending {
		t.Fatalf("record: land %+v, landing_status %s", rec.Land, store.Deref(rec.LandingStatus))
	}
	if _, err := f.a.Land(f.ctx, LandOptions{Query: inv1, Apply: true}); err != nil {
		t.Fatalf("land again: %v", err)
	}
	if got, _ := os.ReadFile(filepath.Join(f.wt.TreePath, "new", "deep", "n.txt")); string(got) != "n\n" {
		t.Errorf("after the retry new/deep/n.txt = %q", got)
	}
}

// A stale .lock on the integration branch's ref: git's
// update-ref fails after read-tree -m -u wrote the files. The tree is put
// back exactly as it was, and the land succeeds once the lock is gone.
func TestLandStaleRefLock(t *testing.T) {
	f := newLandFixture(t)
	f.sandbox(inv1, "echo x > x.txt && sed -i s/two/TWO/ a.txt && git add x.txt && git commit -qam x")
	lockFile := filepath.Join(f.repo, ".git", "refs", "heads", filepath.FromSlash(f.wt.Branch)+".lock")
	if err := os.WriteFile(lockFile, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	beforeHead := gitOut(t, f.wt.TreePath, "rev-parse", "HEAD")
	beforeIndex := gitOut(t, f.wt.TreePath, "ls-files", "-s")
	if _, err := f.a.Land(f.ctx, LandOptions{Query: inv1}); err == nil || !strings.Contains(err.Error(), ".lock") {
		t.Fatalf("err = %v, want update-ref's lock failure", err)
	}
	if got := gitOut(t, f.wt.TreePath, "rev-parse", "HEAD"); got != beforeHead {
		t.Errorf("HEAD moved")
	}
	if got := gitOut(t, f.wt.TreePath, "ls-files", "-s"); got != beforeIndex {
		t.Errorf("index changed:\n%s", got)
	}
	if st := gitOut(t, f.wt.TreePath, "status", "--porcelain", "--untracked-files=all"); st != "" {
		t.Errorf("integration tree changed: %q", st)
	}
	os.Remove(lockFile)
	if _, err := f.a.Land(f.ctx, LandOptions{Query: inv1}); err != nil {
		t.Fatalf("land again: %v", err)
	}
	if got := gitOut(t, f.wt.TreePath, "log", "--format=%s", "-1"); got != "x\n" {
		t.Errorf("log = %q", got)
	}
}

// land --all lands oldest finished first. finished_at has whole seconds: two
// agents that ended within one second are ordered by their end events, not
// by their ids (whose suffix is random).
func TestReadyToLandSameSecond(t *testing.T) {
	f := newLandFixture(t)
	for _, id := range []string{inv1, inv2} {
		f.sandbox(id, "echo "+id+" > "+id+".txt && git add -A && git commit -qm "+id)
		rec := f.read(id)
		rec.FinishedAt = store.Str("2026-01-01T00:00:05Z")
		if err := f.a.Store.WriteInvocation(rec); err != nil {
			t.Fatal(err)
		}
	}
	// inv2 ended first within that second.
	events := map[string]string{inv1: "2026-01-01T00:00:05.9Z", inv2: "2026-01-01T00:00:05.1Z"}
	for id, at := range events {
		line := `{"time":"` + at + `","event":"exited","data":{"exit_code":0}}` + "\n"
		if err := os.WriteFile(f.a.Store.EventsPath(id), []byte(line), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	got, err := f.a.ReadyToLand(f.ctx, "feat", false)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0] != inv2 || got[1] != inv1 {
		t.Fatalf("ReadyToLand = %v, want [%s %s]", got, inv2, inv1)
	}
}

// A record read while its supervisor still ran, then looked at once the
// supervisor had written the run's end and exited: View shows the end the
// supervisor wrote, not a reconstruction saying the supervisor is gone.
func TestViewRereadsARecordWhoseSupervisorEnded(t *testing.T) {
	f := newLandFixture(t)
	rec := f.sandbox("20260101000000-ab12", "true")
	stale := *rec
	stale.Status = store.StatusRunning
	stale.LandingStatus = nil
	dead := 1 << 22 // no such process: pids are below pid_max, at most 1<<22
	stale.SupervisorPID = &dead
	got := f.a.View(f.ctx, &stale)
	if got.Status != store.StatusFinished || got.Error != "" {
		t.Fatalf("View of a stale record: status %s, error %q", got.Status, got.Error)
	}
}
