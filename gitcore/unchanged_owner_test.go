package gitcore

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/git-agency/git-agency/internal/testenv"
)

// An index written by git inside a user namespace of its own (root's
// walled agent runs as user 1000 there) names that user for every file:
// TrackedUnchanged still proves the tree clean from outside, where every
// file is root's, without hashing them all.
func TestTrackedUnchangedOtherOwner(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root: the index is written as another user of a user namespace")
	}
	bwrap := testenv.Need(t, "bwrap")
	ctx := context.Background()
	repo, dir := snapRepo(t)
	for i := 0; i < 3*maxHashed; i++ {
		write(t, dir, fmt.Sprintf("d%d/f%d.txt", i%7, i), fmt.Sprintf("file %d\n", i))
	}
	// Every file dated back, so that none is racily clean.
	old := time.Unix(time.Now().Unix()-3600, 0)
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			os.Chtimes(p, old, old)
		}
		return nil
	})
	// git add and commit as user 1000 of a user namespace mapped to root,
	// as the wall runs a root user's agent.
	in := exec.Command(bwrap, "--bind", "/", "/", "--dev", "/dev", "--unshare-user", "--uid", "1000", "--gid", "1000",
		"--chdir", dir, "--", "sh", "-c", "git add -A && git -c user.name=a -c user.email=a@b commit -qm more && git update-index -q --really-refresh")
	in.Env = append(os.Environ(), "HOME="+t.TempDir(), "GIT_CONFIG_NOSYSTEM=1")
	if out, err := in.CombinedOutput(); err != nil {
		if testenv.CI() {
			t.Fatalf("CI=true: bubblewrap cannot make a user namespace here: %v\n%s", err, out)
		}
		t.Skipf("bubblewrap cannot make a user namespace here: %v\n%s", err, out)
	}
	if debug := git(t, dir, "ls-files", "--debug", "d0/f0.txt"); !strings.Contains(debug, "uid: 1000") {
		t.Fatalf("index written as root:\n%s", debug)
	}
	head, headTree := git(t, dir, "rev-parse", "HEAD"), git(t, dir, "rev-parse", "HEAD^{tree}")
	if !repo.Tree(dir).TrackedUnchanged(ctx, head, headTree) {
		t.Fatal("a clean tree whose index names another owner is not proven clean")
	}
	write(t, dir, "d0/f0.txt", "changed\n")
	if repo.Tree(dir).TrackedUnchanged(ctx, head, headTree) {
		t.Fatal("a changed file is proven clean")
	}
}
