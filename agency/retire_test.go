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
