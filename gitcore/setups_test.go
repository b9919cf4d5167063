package gitcore

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/git-agency/git-agency/internal/testenv"
)

// mergeTreeNoFiles answers merge-tree with exit 1 and a tree but no
// conflicted file: what a merge-tree that failed for another reason
// looks like.
type mergeTreeNoFiles struct{}

func (mergeTreeNoFiles) Run(ctx context.Context, c Cmd) (Result, error) {
	if len(c.Args) > 1 && c.Args[1] == "merge-tree" {
		return Result{Stdout: []byte(emptyTree + "\x00"), ExitCode: 1},
			&GitError{Args: c.Args, ExitCode: 1, Stderr: "fatal: injected"}
	}
	return ExecRunner{}.Run(ctx, c)
}

// A merge-tree that exits 1 without naming a conflicted file is an error,
// not a clean merge with an empty tree.
func TestMergeTreeExitOneWithoutFiles(t *testing.T) {
	r, git := testRepo(t)
	base := git("rev-parse", "HEAD")
	git("commit", "-q", "--allow-empty", "-m", "other")
	r.runner = mergeTreeNoFiles{}
	tree, files, err := r.mergeTree(context.Background(), base, "HEAD")
	if err == nil || tree != "" || files != nil {
		t.Fatalf("mergeTree = %q, %q, %v; want an error", tree, files, err)
	}
}

// User configuration that changes porcelain output or the action of
// internal calls does not reach them: log.showSignature (Commits, Commit),
// submodule.recurse (read-tree), diff.renames (DiffNames).
func TestUserConfigPinned(t *testing.T) {
	ctx := context.Background()
	r, git := testRepo(t)
	dir := r.Toplevel
	base := git("rev-parse", "HEAD")
	key := filepath.Join(t.TempDir(), "key")
	testenv.Need(t, "ssh-keygen")
	if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", key).CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen: %v %s", err, out)
	}
	git("config", "gpg.format", "ssh")
	git("config", "user.signingkey", key+".pub")
	git("config", "commit.gpgsign", "true")
	git("config", "log.showSignature", "true")
	git("config", "submodule.recurse", "true")
	git("config", "diff.renames", "true")
	git("config", "diff.ignoreSubmodules", "all")
	git("config", "i18n.logOutputEncoding", "ISO-8859-1")
	git("mv", "a", "b")
	git("commit", "-qm", "rename a to b é")
	tip := git("rev-parse", "HEAD")

	commits, err := r.Commits(ctx, base, tip)
	if err != nil || len(commits) != 1 || commits[0].ID != tip || commits[0].Subject != "rename a to b é" {
		t.Fatalf("Commits = %+v, %v", commits, err)
	}
	info, err := r.Commit(ctx, tip)
	if err != nil || info.Commit != tip {
		t.Fatalf("Commit = %+v, %v", info, err)
	}
	names, err := r.DiffNames(ctx, base, tip)
	if err != nil || strings.Join(names, ",") != "a,b" {
		t.Fatalf("DiffNames = %q, %v; want both sides of the rename", names, err)
	}
	// A gitlink to a commit that no submodule repository holds: with
	// submodule.recurse honoured, read-tree -u fails on it.
	git("update-index", "--add", "--cacheinfo", "160000,"+tip+",sub")
	os.WriteFile(filepath.Join(dir, ".gitmodules"), []byte("[submodule \"sub\"]\n\tpath = sub\n\turl = ./nowhere\n"), 0o644)
	git("add", ".gitmodules")
	git("commit", "-qm", "submodule")
	withSub := git("rev-parse", "HEAD")
	if names, err := r.DiffNames(ctx, tip, withSub); err != nil || strings.Join(names, ",") != ".gitmodules,sub" {
		t.Fatalf("DiffNames = %q, %v; want the submodule too", names, err)
	}
	if err := r.Tree(dir).fastForward(ctx, withSub, withSub, "test"); err != nil {
		t.Fatalf("read-tree with submodule.recurse set: %v", err)
	}
	if err := r.Tree(dir).SwitchFiles(ctx, withSub, tip); err != nil {
		t.Fatalf("SwitchFiles with submodule.recurse set: %v", err)
	}
}
