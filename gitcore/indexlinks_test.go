package gitcore

import "testing"

// MayHoldGitlinks reads the index's modes whatever its flags: no gitlink
// says false, a gitlink (no .gitmodules needed) true, in every index
// version and with skip-worktree entries (extended flags) around it.
func TestMayHoldGitlinks(t *testing.T) {
	r, git := testRepo(t)
	tree := r.Tree(r.Toplevel)
	if tree.MayHoldGitlinks() {
		t.Fatal("an index with no gitlink: MayHoldGitlinks = true")
	}
	git("update-index", "--skip-worktree", "a")
	for _, v := range []string{"3", "4"} {
		git("update-index", "--index-version", v)
		if tree.MayHoldGitlinks() {
			t.Fatalf("version %s, skip-worktree, no gitlink: MayHoldGitlinks = true", v)
		}
	}
	head := git("rev-parse", "HEAD")
	git("update-index", "--add", "--cacheinfo", "160000,"+head+",sub")
	git("commit", "-qm", "embed")
	for _, v := range []string{"2", "3", "4"} {
		if v == "2" {
			git("update-index", "--no-skip-worktree", "a")
		}
		git("update-index", "--index-version", v)
		if !tree.MayHoldGitlinks() {
			t.Fatalf("version %s with a gitlink: MayHoldGitlinks = false", v)
		}
	}
}
