package agency

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

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
