package gitcore

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A snapshot's commit and trees written from here are the objects git
// writes: the commit's id is commit-tree's for the same date, both are
// read back by git and pass fsck --strict; with core.sharedRepository
// (permissions git sets) git writes them.
func TestOwnObjectsAsGitWritesThem(t *testing.T) {
	tr, dir, rec := recordedRepo(t)
	ctx := context.Background()
	write(t, dir, "d/e/deep.txt", "changed\n")
	write(t, dir, "new/file.txt", "new\n")
	snap, err := tr.SnapshotTree(ctx, SnapshotRequest{IncludeUntracked: true})
	if err != nil {
		t.Fatal(err)
	}
	commit, err := tr.repo.CommitTree(ctx, snap.Tree, snap.Head, "agency snapshot x 1")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range *rec {
		if strings.Contains(c, "mktree") || strings.Contains(c, "commit-tree") || strings.Contains(c, "cat-file") {
			t.Fatalf("ran %q (all: %q)", c, *rec)
		}
	}
	body := git(t, dir, "cat-file", "commit", commit)
	var date string
	for _, l := range strings.Split(body, "\n") {
		if rest, ok := strings.CutPrefix(l, "committer git-agency <git-agency@localhost> "); ok {
			date = rest
		}
	}
	if date == "" {
		t.Fatalf("commit %s:\n%s", commit, body)
	}
	cmd := []string{"commit-tree", snap.Tree, "-p", snap.Head, "-m", "agency snapshot x 1"}
	t.Setenv("GIT_AUTHOR_NAME", "git-agency")
	t.Setenv("GIT_AUTHOR_EMAIL", "git-agency@localhost")
	t.Setenv("GIT_COMMITTER_NAME", "git-agency")
	t.Setenv("GIT_COMMITTER_EMAIL", "git-agency@localhost")
	t.Setenv("GIT_AUTHOR_DATE", date)
	t.Setenv("GIT_COMMITTER_DATE", date)
	if want := gitEnv(t, dir, cmd...); want != commit {
		t.Fatalf("commit %s, commit-tree wrote %s", commit, want)
	}
	if files := git(t, dir, "ls-tree", "-r", "--name-only", commit); !strings.Contains(files, "new/file.txt") {
		t.Fatalf("tree of %s: %s", commit, files)
	}
	gitEnv(t, dir, "fsck", "--strict", "--no-dangling")
	fi, err := os.Stat(filepath.Join(dir, ".git", "objects", commit[:2], commit[2:]))
	if err != nil || fi.Mode().Perm() != 0o444 {
		t.Fatalf("loose commit: %v %v", fi, err)
	}

	// core.sharedRepository: git writes them.
	git(t, dir, "config", "core.sharedRepository", "group")
	*rec = nil
	write(t, dir, "new/file.txt", "newer\n")
	snap, err = tr.SnapshotTree(ctx, SnapshotRequest{IncludeUntracked: true})
	if err == nil {
		_, err = tr.repo.CommitTree(ctx, snap.Tree, snap.Head, "agency snapshot x 2")
	}
	if err != nil {
		t.Fatal(err)
	}
	if all := strings.Join(*rec, "\n"); !strings.Contains(all, "mktree") || !strings.Contains(all, "commit-tree") {
		t.Fatalf("with core.sharedRepository, git did not write: %q", *rec)
	}
}

// gitEnv is git with the test's environment as it is (git's helper sets
// an identity of its own).
func gitEnv(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// The dates of the environment read as git 2.39 writes them; any other
// form is left to git.
func TestOwnDate(t *testing.T) {
	for v, want := range map[string]string{
		"2026-01-02T03:04:05Z":      "1767323045 +0000",
		"2026-01-02T03:04:05+02:00": "1767315845 +0200",
		"2026-01-02T03:04:05-05:30": "1767342845 -0530",
		"@1700000000 +0130":         "1700000000 +0130",
		"yesterday":                 "",
		"1700000000":                "",
	} {
		t.Setenv("GIT_AUTHOR_DATE", v)
		got, ok := ownDate("GIT_AUTHOR_DATE", time.Now())
		if got != want || ok != (want != "") {
			t.Errorf("%q: %q %v, want %q", v, got, ok, want)
		}
	}
}
