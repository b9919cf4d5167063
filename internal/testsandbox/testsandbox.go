// Package testsandbox makes, for unit tests, a repository with a store and
// one invocation's sandbox worktree, as an agent's run has them.
package testsandbox

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/git-agency/git-agency/gitcore"
	"github.com/git-agency/git-agency/internal/testrepo"
	"github.com/git-agency/git-agency/store"
)

// Inv is the invocation whose sandbox New makes.
const Inv = "20260128120500-b7c9"

// Sandbox is what New made.
type Sandbox struct {
	Repo  *gitcore.Repo
	Store *store.Store
	Inv   string
	Tree  string // the sandbox worktree, on agency/sandbox-<Inv>
}

// New makes a repository with one commit (a.txt, and a .gitignore that
// ignores node_modules/), a store, the invocation directory of Inv, and its
// sandbox worktree with .agency/ ignored. HOME and git's identity are the
// test's own.
func New(t testing.TB) Sandbox {
	t.Helper()

	dir := t.TempDir()
	t.Setenv("HOME", dir)
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	t.Setenv("GIT_AUTHOR_NAME", "t")
	t.Setenv("GIT_AUTHOR_EMAIL", "t@t")
	t.Setenv("GIT_COMMITTER_NAME", "t")
	t.Setenv("GIT_COMMITTER_EMAIL", "t@t")

	repoDir := filepath.Join(dir, "repo")
	testrepo.Git(t, dir, "init", "-q", "-b", "main", repoDir)
	testrepo.Write(t, repoDir, "a.txt", "a\n")
	testrepo.Write(t, repoDir, ".gitignore", "node_modules/\n")
	testrepo.Git(t, repoDir, "add", "-A")
	testrepo.Git(t, repoDir, "commit", "-q", "-m", "init")

	repo, err := gitcore.Discover(context.Background(), nil, repoDir)
	if err != nil {
		t.Fatal(err)
	}

	st, err := store.Open(filepath.Join(dir, "data"), repo.CommonDir)
	if err != nil {
		t.Fatal(err)
	}

	for _, d := range []string{st.InvocationDir(Inv), st.SandboxDir(Inv)} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}

	tree := st.SandboxTreePath(Inv)
	testrepo.Git(t, repoDir, "worktree", "add", "-q", "-b", store.SandboxBranch(Inv), tree, "HEAD")
	testrepo.Write(t, tree, ".agency/.gitignore", "*\n")

	return Sandbox{Repo: repo, Store: st, Inv: Inv, Tree: tree}
}

// ShadowCommit makes a commit on branch in the shadow git directory shadow,
// as a walled agent's git would (its objects in the shadow's own store, the
// repository's as alternates), and returns its id. The commit adds
// name.txt holding name, and its message is name.
func ShadowCommit(t testing.TB, repo *gitcore.Repo, shadow, branch, name string) string {
	t.Helper()

	env := append(os.Environ(), "GIT_DIR="+shadow, "GIT_ALTERNATE_OBJECT_DIRECTORIES="+repo.ObjectsDir(),
		"GIT_AUTHOR_NAME=a", "GIT_AUTHOR_EMAIL=a@a", "GIT_COMMITTER_NAME=a", "GIT_COMMITTER_EMAIL=a@a")
	run := func(stdin string, args ...string) string {
		out, err := gitcore.ExecRunner{}.Run(context.Background(), gitcore.Cmd{Args: args, Env: env, Stdin: strings.NewReader(stdin)})
		if err != nil {
			t.Fatalf("git %v: %v", args, err)
		}
		return strings.TrimSpace(string(out.Stdout))
	}

	parent := run("", "rev-parse", "refs/heads/"+branch)
	blob := run(name+"\n", "hash-object", "-w", "--stdin")
	tree := run("100644 blob "+blob+"\t"+name+".txt\n", "mktree")
	id := run("", "commit-tree", tree, "-p", parent, "-m", name)
	run("", "update-ref", "refs/heads/"+branch, id)

	return id
}
