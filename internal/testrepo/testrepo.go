// Package testrepo makes throwaway git repositories for unit tests.
package testrepo

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// New creates a repository with one empty commit on main in a temporary
// directory, points AGENCY_DATA_DIR and HOME there, and returns its path.
func New(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	t.Setenv("AGENCY_DATA_DIR", filepath.Join(dir, "data"))
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	t.Setenv("HOME", dir)
	t.Setenv("AGENCY_FAILPOINT", "")
	repo := filepath.Join(dir, "repo")
	for _, args := range [][]string{
		{"init", "-q", "-b", "main", repo},
		{"-C", repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "init"},
	} {
		if out, err := exec.Command("git", args...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}

	return repo
}

// Git runs git -C dir with args, as the author and committer "t <t@t>",
// and returns its output without the surrounding white space. It fails the
// test when git does.
func Git(t testing.TB, dir string, args ...string) string {
	t.Helper()

	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(os.Environ(),
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}

	return strings.TrimSpace(string(out))
}

// Write writes content to the file name below dir, making the directories
// on the way.
func Write(t testing.TB, dir, name, content string) {
	t.Helper()

	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TreeHas reports whether the tree of commit, in the repository at dir,
// holds a file at path.
func TreeHas(t testing.TB, dir, commit, path string) bool {
	t.Helper()

	out := Git(t, dir, "ls-tree", "-r", "--name-only", commit)
	for _, l := range strings.Split(out, "\n") {
		if l == path {
			return true
		}
	}
	return false
}
