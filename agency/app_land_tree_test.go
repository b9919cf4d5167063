package agency

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/git-agency/git-agency/errs"
	"github.com/git-agency/git-agency/store"
)

// A land takes the sandbox tree and its git registration away at once; its
// files are deleted by this command (DetachRemovals unset) or a remover.
// Retired trees no remover works on are a leftover: doctor reports them
// and gc removes them; while a remover holds the lock they are neither.
func TestLandRetiresSandboxTree(t *testing.T) {
	f := newLandFixture(t)
	f.sandbox(inv1, "echo x > x.txt && git add x.txt && git commit -qm x")
	if _, err := f.a.Land(f.ctx, LandOptions{Query: inv1}); err != nil {
		t.Fatal(err)
	}
	tree := f.a.Store.SandboxTreePath(inv1)
	if _, err := os.Lstat(tree); !os.IsNotExist(err) {
		t.Fatalf("sandbox tree kept: %v", err)
	}
	if list := gitOut(t, f.repo, "worktree", "list", "--porcelain"); strings.Contains(list, tree) {
		t.Fatalf("sandbox still registered:\n%s", list)
	}
	if left := store.RetiredEntries(f.a.Store.RetiredDir()); len(left) != 0 {
		t.Fatalf("retired trees left: %v", left)
	}

	// A remover that was killed: its tree stays in retired/.
	dead := filepath.Join(f.a.Store.RetiredDir(), inv2+"-x")
	os.MkdirAll(filepath.Join(dead, "sub"), 0o700)
	os.WriteFile(filepath.Join(dead, "sub", "f"), []byte("x"), 0o600)
	lock, ok, err := store.LockRetired(f.a.Store.RetiredDir(), false)
	if err != nil || !ok {
		t.Fatalf("lock: %v %v", ok, err)
	}
	for _, l := range f.a.leftovers() {
		if l.Kind == GCRetiredTree {
			t.Fatalf("reported while a remover works: %+v", l)
		}
	}
	lock.Close()
	found := false
	for _, fd := range f.a.Doctor(f.ctx) {
		found = found || (fd.Check == "leftovers" && fd.Path == dead && fd.Level == LevelProblem)
	}
	if !found {
		t.Fatal("doctor does not report the retired tree")
	}
	plan, err := f.a.GCPlan(f.ctx, GCOptions{})
	if err != nil {
		t.Fatal(err)
	}
	f.a.GC(f.ctx, plan, nil)
	if _, err := os.Lstat(dead); !os.IsNotExist(err) {
		t.Fatalf("gc kept the retired tree: %v", err)
	}
}

// sandboxDirty answers as IsDirty (a status) does, whichever way it takes:
// clean after a commit, an untracked file, an untracked directory holding
// only ignored files (clean), an ignored file, a changed and a staged
// tracked file, an untracked file in a new directory.
func TestSandboxDirtyAsStatus(t *testing.T) {
	f := newLandFixture(t)
	f.sandbox(inv1, "echo '*.o' > .gitignore && echo x > x.txt && git add -A && git commit -qm x")
	tree := f.a.Store.SandboxTreePath(inv1)
	rec := f.read(inv1)
	tip := strings.TrimSpace(gitOut(t, tree, "rev-parse", "HEAD"))
	commits, err := f.a.Repo.Commits(f.ctx, rec.BaseCommit, tip)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, script, undo string }{
		{"clean", "true", "true"},
		{"untracked file", "echo u > u.txt", "rm u.txt"},
		{"ignored file", "echo o > a.o", "rm a.o"},
		{"untracked dir of ignored files", "mkdir -p d/e && echo o > d/e/b.o", "rm -r d"},
		{"untracked file in a new dir", "mkdir -p n && echo n > n/f", "rm -r n"},
		{"changed tracked file", "echo more >> x.txt", "git checkout -- x.txt"},
		{"staged file", "echo s > s.txt && git add s.txt", "git rm -qf --cached s.txt && rm s.txt"},
	} {
		f.sh(tree, c.script)
		want, err := f.a.Repo.Tree(tree).IsDirty(f.ctx)
		if err != nil {
			t.Fatal(err)
		}
		got, err := f.a.lander().SandboxDirty(f.ctx, tree, commits, tip)
		if err != nil || got != want {
			t.Errorf("%s: SandboxDirty = %v (%v), status says %v", c.name, got, err, want)
		}
		f.sh(tree, c.undo)
	}
}

// A land updates only what it changes in the integration tree: after it,
// the index is exactly the new HEAD's tree, the landed files are there,
// an untracked file elsewhere is kept, and a tracked file that was only
// touched (same content, new time) neither blocks the land nor changes.
func TestLandIntegrationTreeAfter(t *testing.T) {
	f := newLandFixture(t)
	f.sandbox(inv1, "mkdir -p landed && for i in 1 2 3; do echo $i > landed/l$i.txt; git add -A; git commit -qm l$i; done")
	integ := f.wt.TreePath
	f.sh(integ, "echo mine > untracked.txt && touch -d '+1 hour' a.txt")
	res, err := f.a.Land(f.ctx, LandOptions{Query: inv1})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(gitOut(t, integ, "rev-parse", "HEAD")); got != res.ResultHead {
		t.Fatalf("HEAD = %s, want %s", got, res.ResultHead)
	}
	if d := gitOut(t, integ, "diff-index", "--cached", "--name-only", "HEAD"); d != "" {
		t.Fatalf("index differs from HEAD: %q", d)
	}
	if st := gitOut(t, integ, "status", "--porcelain"); st != "?? untracked.txt\n" {
		t.Fatalf("status = %q", st)
	}
	for i, want := range []string{"1\n", "2\n", "3\n"} {
		if b, _ := os.ReadFile(filepath.Join(integ, "landed", "l"+string(rune('1'+i))+".txt")); string(b) != want {
			t.Errorf("landed/l%d.txt = %q", i+1, b)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(integ, "a.txt")); string(b) != "one\ntwo\nthree\n" {
		t.Errorf("a.txt = %q", b)
	}
}

// A land whose third commit of five conflicts names that commit and its
// file, and leaves the integration branch, index and files, the sandbox
// tree and the record as they were.
func TestLandConflictOnALaterCommit(t *testing.T) {
	f := newLandFixture(t)
	f.sandbox(inv1, "for i in 1 2; do echo $i > s$i.txt; git add -A; git commit -qm s$i; done; "+
		"sed -i s/two/SANDBOX/ a.txt && git commit -qam conflicting && for i in 4 5; do echo $i > s$i.txt; git add -A; git commit -qm s$i; done")
	integ := f.wt.TreePath
	f.sh(integ, "sed -i s/two/INTEGRATION/ a.txt && git commit -qam moved")
	head := gitOut(t, integ, "rev-parse", "HEAD")
	index := gitOut(t, integ, "ls-files", "-s")
	_, err := f.a.Land(f.ctx, LandOptions{Query: inv1})
	e := errs.As(err)
	if !errs.Is(err, errs.ELandConflict) || !strings.Contains(strings.Join(e.Detail, ","), "a.txt") || !strings.Contains(e.Msg, "conflicting") {
		t.Fatalf("err = %v (%+v)", err, e)
	}
	if h := gitOut(t, integ, "rev-parse", "HEAD"); h != head {
		t.Error("HEAD moved")
	}
	if got := gitOut(t, integ, "ls-files", "-s"); got != index {
		t.Error("index changed")
	}
	if st := gitOut(t, integ, "status", "--porcelain"); st != "" {
		t.Errorf("status = %q", st)
	}
	if _, err := os.Stat(filepath.Join(integ, "s1.txt")); !os.IsNotExist(err) {
		t.Error("a commit before the conflict was applied")
	}
	if rec := f.read(inv1); store.Deref(rec.LandingStatus) != store.LandingPending || rec.Land != nil {
		t.Errorf("record = %+v", rec)
	}
	if _, err := os.Stat(f.a.Store.SandboxTreePath(inv1)); err != nil {
		t.Error("sandbox removed")
	}
}
