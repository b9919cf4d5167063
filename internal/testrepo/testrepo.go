// Package testrepo makes throwaway git repositories for unit tests.
package testrepo

import (
	"os/exec"
	"path/filepath"
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
