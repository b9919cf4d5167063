package agency

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

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
		got, err := f.a.sandboxDirty(f.ctx, tree, commits, tip)
		if err != nil || got != want {
			t.Errorf("%s: sandboxDirty = %v (%v), status says %v", c.name, got, err, want)
		}
		f.sh(tree, c.undo)
	}
}

// A sandbox tree another program replaced by a symlink to one of the
// user's linked worktrees: retiring it removes the link and our
// registration, never the user's worktree or its registration (its HEAD,
// its index with what is staged there).
func TestRetireSandboxTreeSymlink(t *testing.T) {
	f := newLandFixture(t)
	rec := f.sandbox(inv1, "true")
	mine := filepath.Join(t.TempDir(), "mine")
	gitOut(t, f.repo, "worktree", "add", "-q", "-b", "mine", mine)
	f.sh(mine, "echo s > staged.txt && git add staged.txt")
	tree := f.a.Store.SandboxTreePath(inv1)
	if err := os.RemoveAll(tree); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(mine, tree); err != nil {
		t.Fatal(err)
	}
	if err := f.a.retireSandboxTree(f.ctx, rec); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(tree); !os.IsNotExist(err) {
		t.Fatalf("link kept: %v", err)
	}
	list := gitOut(t, f.repo, "worktree", "list", "--porcelain")
	if !strings.Contains(list, "worktree "+mine+"\n") || strings.Contains(list, tree) {
		t.Fatalf("registrations:\n%s", list)
	}
	if staged := gitOut(t, mine, "diff", "--cached", "--name-only"); strings.TrimSpace(staged) != "staged.txt" {
		t.Fatalf("the user's staged file: %q", staged)
	}
}
