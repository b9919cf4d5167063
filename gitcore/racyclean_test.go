package gitcore

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// After `git update-index --refresh` of many touched
// files, written in the second the index was (racily clean for git),
// TrackedUnchanged left the tree to a `git status` on every call. One
// clean status is remembered: the next call proves the tree clean from
// files alone, with no git process; an edit after it is still seen.
func TestTrackedUnchangedRemembersRacyProof(t *testing.T) {
	ctx := context.Background()
	tree, dir, cmds := recordedRepo(t)
	for i := 0; i < 100; i++ {
		write(t, dir, fmt.Sprintf("many/f%03d.txt", i), fmt.Sprintf("file %03d\n", i))
	}
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "-q", "-m", "many")
	head, headTree := git(t, dir, "rev-parse", "HEAD"), git(t, dir, "rev-parse", "HEAD^{tree}")
	// Touch every file at X.1 s, refresh, and date the index X.5 s: every
	// entry is racily clean for git, which compares seconds.
	x := time.Now().Unix() - 100
	touched := time.Unix(x, 100_000_000)
	for _, f := range strings.Split(git(t, dir, "ls-files"), "\n") {
		if err := os.Chtimes(filepath.Join(dir, f), touched, touched); err != nil {
			t.Fatal(err)
		}
	}
	git(t, dir, "update-index", "-q", "--refresh")
	index := filepath.Join(dir, ".git", "index")
	if err := os.Chtimes(index, time.Unix(x, 500_000_000), time.Unix(x, 500_000_000)); err != nil {
		t.Fatal(err)
	}

	*cmds = nil
	if tree.TrackedUnchanged(ctx, head, headTree) {
		t.Fatal("100 racily clean entries, never proven: proven unchanged")
	}
	if dirty, err := tree.HasTrackedChanges(ctx); err != nil || dirty {
		t.Fatalf("git status: dirty %v, %v", dirty, err)
	}
	for i := 0; i < 2; i++ {
		*cmds = nil
		if !tree.TrackedUnchanged(ctx, head, headTree) {
			t.Fatalf("call %d after a clean status: not proven unchanged", i+1)
		}
		if len(*cmds) != 0 {
			t.Fatalf("call %d after a clean status ran git: %q", i+1, *cmds)
		}
	}

	// Other bytes of the same size, dated back to the touch: its ctime
	// moved, so it is hashed and found changed.
	p := filepath.Join(dir, "many", "f007.txt")
	write(t, dir, "many/f007.txt", "FILE 007\n")
	if err := os.Chtimes(p, touched, touched); err != nil {
		t.Fatal(err)
	}
	if tree.TrackedUnchanged(ctx, head, headTree) {
		t.Fatal("an edit after the proof: proven unchanged")
	}
	// An index written again (another stamp) forgets the proof.
	write(t, dir, "many/f007.txt", "file 007\n")
	if err := os.Chtimes(p, touched, touched); err != nil {
		t.Fatal(err)
	}
	git(t, dir, "update-index", "-q", "--refresh")
	if err := os.Chtimes(index, time.Unix(x, 600_000_000), time.Unix(x, 600_000_000)); err != nil {
		t.Fatal(err)
	}
	if tree.TrackedUnchanged(ctx, head, headTree) {
		t.Fatal("a new index stamp: the old proof still used")
	}
}
