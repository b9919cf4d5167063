package gitcore

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/git-agency/git-agency/gitcore/internal/index"
)

// What gitcore reads from files in a sandbox's tree and its worktree git
// directory (an agent's) neither waits on a FIFO nor reads without end.
func TestAgentFilesReadBounded(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"HEAD", racyMemoName, "file"} {
		if err := syscall.Mkfifo(filepath.Join(dir, name), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("/dev/zero", filepath.Join(dir, "zero")); err != nil {
		t.Fatal(err)
	}

	done := make(chan struct{})
	go func() {
		defer close(done)
		tree := (&Repo{CommonDir: dir}).Tree(dir)
		if h := tree.headCommit(dir); h != "" {
			t.Errorf("headCommit of a FIFO: %q", h)
		}
		racyRuleFor(dir, &index.File{Stamp: "x"})
		if blobIs(filepath.Join(dir, "file"), 20, make([]byte, 20)) || blobIs(filepath.Join(dir, "zero"), 20, make([]byte, 20)) {
			t.Error("blobIs of a FIFO or /dev/zero")
		}
	}()

	select {
	case <-done:
	case <-time.After(10 * time.Second):
		for _, name := range []string{"HEAD", racyMemoName, "file"} {
			if f, err := os.OpenFile(filepath.Join(dir, name), os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
				f.Close()
			}
		}
		t.Fatal("a read of an agent's file waited on a FIFO")
	}
}
