package gitcore

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// HeadFromFiles is Head for a branch (loose or packed), a detached HEAD
// and a linked worktree, and "" (ask git) for an unborn branch.
func TestHeadFromFiles(t *testing.T) {
	ctx := context.Background()
	r, git := testRepo(t)
	dir := r.Toplevel
	same := func(what string, tree *Tree) {
		t.Helper()
		want, err := tree.Head(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if got := tree.HeadFromFiles(); got != want || got == "" {
			t.Errorf("%s: HeadFromFiles %q, Head %q", what, got, want)
		}
	}
	same("loose branch", r.Tree(dir))
	git("pack-refs", "--all")
	same("packed branch", r.Tree(dir))
	git("commit", "-q", "--allow-empty", "-m", "next")
	same("packed, then moved", r.Tree(dir))
	git("checkout", "-q", "--detach")
	same("detached", r.Tree(dir))
	wt := filepath.Join(t.TempDir(), "wt")
	git("worktree", "add", "-q", "--detach", wt)
	same("linked worktree", r.Tree(wt))
	git("checkout", "-q", "--orphan", "unborn")
	if got := r.Tree(dir).HeadFromFiles(); got != "" {
		t.Errorf("unborn branch: HeadFromFiles %q, want \"\"", got)
	}
}

// CommitFromFiles reads a loose commit's tree and parents as git does, and
// leaves a packed one (or anything but a commit) to git.
func TestCommitFromFiles(t *testing.T) {
	r, git := testRepo(t)
	first := git("rev-parse", "HEAD")
	git("commit", "-q", "--allow-empty", "-m", "second\n\nparent deadbeef in the message")
	git("checkout", "-q", "-b", "side", first)
	git("commit", "-q", "--allow-empty", "-m", "third")
	git("checkout", "-q", "main")
	git("merge", "-q", "--no-ff", "-m", "merge", "side")
	if n := len(strings.Fields(git("rev-list", "--parents", "-n", "1", "HEAD"))); n != 3 {
		t.Fatalf("HEAD has %d parents, want a merge", n-1)
	}
	for _, c := range []string{"HEAD", "HEAD~1", first} {
		id := git("rev-parse", c)
		tree, parents, ok := r.CommitFromFiles(id)
		want := strings.Fields(git("rev-list", "--parents", "-n", "1", id))[1:]
		if !ok || tree != git("rev-parse", id+"^{tree}") || strings.Join(parents, " ") != strings.Join(want, " ") {
			t.Errorf("%s: tree %s parents %v ok %v; want parents %v", c, tree, parents, ok, want)
		}
	}
	if _, _, ok := r.CommitFromFiles(git("rev-parse", "HEAD^{tree}")); ok {
		t.Error("a tree read as a commit")
	}
	git("gc", "-q")
	if _, _, ok := r.CommitFromFiles(git("rev-parse", "HEAD")); ok {
		t.Error("a packed commit read from files")
	}
}

// HeadFromFiles reads a HEAD only from a git dir of this repository: a
// standalone repository, or a worktree of another clone, at a tree's path
// is "" (ask git), not the tip of our branch of the same name, nor a
// detached HEAD of theirs.
func TestHeadFromFilesOtherRepository(t *testing.T) {
	r, git := testRepo(t)
	other := filepath.Join(t.TempDir(), "other")
	for _, args := range [][]string{
		{"init", "-q", "-b", "main", other},
		{"-C", other, "-c", "user.name=T", "-c", "user.email=t@e", "commit", "-q", "--allow-empty", "-m", "theirs"},
	} {
		if out, err := exec.Command("git", args...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	if got := r.Tree(other).HeadFromFiles(); got != "" {
		t.Errorf("standalone repository: HeadFromFiles %q (our main is %s), want \"\"", got, git("rev-parse", "main"))
	}
	wt := filepath.Join(t.TempDir(), "wt")
	if out, err := exec.Command("git", "-C", other, "worktree", "add", "-q", "--detach", wt).CombinedOutput(); err != nil {
		t.Fatalf("worktree add: %v\n%s", err, out)
	}
	if got := r.Tree(wt).HeadFromFiles(); got != "" {
		t.Errorf("another repository's worktree: HeadFromFiles %q, want \"\"", got)
	}
}

// RemoveRegistration deletes a directory under <common>/worktrees/ and
// refuses any other (the common dir itself, a directory elsewhere).
func TestRemoveRegistration(t *testing.T) {
	r, git := testRepo(t)
	wt := filepath.Join(t.TempDir(), "wt")
	git("worktree", "add", "-q", "--detach", wt)
	admin := filepath.Join(r.CommonDir, "worktrees", "wt")
	other := t.TempDir()
	for _, bad := range []string{r.CommonDir, filepath.Join(r.CommonDir, "worktrees"), other, filepath.Join(admin, "..", "..")} {
		if err := r.RemoveRegistration(bad); err == nil {
			t.Errorf("%s: removed", bad)
		}
	}
	if _, err := os.Stat(other); err != nil {
		t.Fatal(err)
	}
	if err := r.RemoveRegistration(admin); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(admin); !os.IsNotExist(err) {
		t.Fatalf("registration kept: %v", err)
	}
}

// BranchFromFiles says what `symbolic-ref --short HEAD` says, or that it
// cannot tell: when a tag (loose or packed) or a ref under refs/ has the
// branch's name, git spells the branch heads/<name>.
func TestBranchFromFiles(t *testing.T) {
	ctx := context.Background()
	r, git := testRepo(t)
	dir := r.Toplevel
	same := func(what string, tree *Tree) {
		t.Helper()
		want, err := tree.CurrentBranch(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if got, ok := tree.BranchFromFiles(); !ok || got != want {
			t.Errorf("%s: BranchFromFiles %q %v, CurrentBranch %q", what, got, ok, want)
		}
	}
	unsure := func(what string, tree *Tree) {
		t.Helper()
		if got, ok := tree.BranchFromFiles(); ok {
			want, _ := tree.CurrentBranch(ctx)
			t.Errorf("%s: BranchFromFiles %q, want not ok (CurrentBranch %q)", what, got, want)
		}
	}
	same("on main", r.Tree(dir))
	git("checkout", "-q", "-b", "agency/x-1234")
	same("nested branch name", r.Tree(dir))
	git("tag", "agency/x-1234")
	unsure("a loose tag of the same name", r.Tree(dir))
	git("pack-refs", "--all")
	unsure("a packed tag of the same name", r.Tree(dir))
	git("tag", "-d", "agency/x-1234")
	same("the tag deleted", r.Tree(dir))
	git("update-ref", "refs/agency/x-1234", "HEAD")
	unsure("refs/<name>", r.Tree(dir))
	git("update-ref", "-d", "refs/agency/x-1234")
	git("checkout", "-q", "--detach")
	same("detached", r.Tree(dir))
	wt := filepath.Join(t.TempDir(), "wt")
	git("worktree", "add", "-q", "-b", "side", wt)
	same("linked worktree", r.Tree(wt))
	git("checkout", "-q", "--orphan", "unborn")
	same("unborn branch", r.Tree(dir))
}

// BranchExistsFromFiles agrees with BranchExists for loose and packed
// branches, and for a name that is only a directory of refs.
func TestBranchExistsFromFiles(t *testing.T) {
	ctx := context.Background()
	r, git := testRepo(t)
	check := func(what, name string) {
		t.Helper()
		want, err := r.BranchExists(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		if got, ok := r.BranchExistsFromFiles(name); !ok || got != want {
			t.Errorf("%s: BranchExistsFromFiles(%q) %v %v, BranchExists %v", what, name, got, ok, want)
		}
	}
	check("current branch", "main")
	check("missing", "agency/x-1234")
	git("branch", "agency/x-1234")
	check("loose", "agency/x-1234")
	check("a directory of refs", "agency")
	git("pack-refs", "--all")
	check("packed", "agency/x-1234")
	check("missing, packed-refs there", "agency/y-1234")
	git("branch", "-D", "agency/x-1234")
	check("deleted from packed-refs", "agency/x-1234")
}
