package gitcore

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// settle dates every file of dir back to a whole second of its own (git
// refreshes an entry only when a second differs) and rewrites the index,
// so no entry is racily clean.
func settle(t *testing.T, dir string, n int) {
	t.Helper()
	old := time.Unix(time.Now().Unix()-3600-int64(n), 0)
	for _, f := range strings.Split(git(t, dir, "ls-files"), "\n") {
		if p := filepath.Join(dir, f); f != "" {
			if err := os.Chtimes(p, old, old); err != nil && !os.IsNotExist(err) {
				t.Fatal(err)
			}
		}
	}
	git(t, dir, "update-index", "-q", "--really-refresh")
}

// TrackedUnchanged proves a tree clean only where git's status finds no
// change to a tracked file; every change (staged, edited with or without a
// new size or time, deleted, made executable, HEAD moved) and every index
// it does not follow is "not proven", and then git answers.
func TestTrackedUnchanged(t *testing.T) {
	ctx := context.Background()
	repo, dir := snapRepo(t)
	write(t, dir, "d/e/deep.txt", "deep\n")
	write(t, dir, "sparse/away.txt", "away\n")
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "-q", "-m", "more")
	tree := repo.Tree(dir)
	head, headTree := git(t, dir, "rev-parse", "HEAD"), git(t, dir, "rev-parse", "HEAD^{tree}")
	settled := 0
	settle := func(t *testing.T, dir string) { settled++; settle(t, dir, settled) }
	check := func(name string, want bool) {
		t.Helper()
		got := tree.TrackedUnchanged(ctx, head, headTree)
		dirty, err := tree.HasTrackedChanges(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if got != want || (got && dirty) {
			t.Errorf("%s: TrackedUnchanged = %v (want %v), git says dirty = %v", name, got, want, dirty)
		}
	}
	restore := func() {
		t.Helper()
		// Every file written again: git itself may miss an edit that
		// kept the size and the times' seconds.
		for _, f := range strings.Split(git(t, dir, "ls-files"), "\n") {
			os.Remove(filepath.Join(dir, f))
		}
		git(t, dir, "reset", "-q", "--hard")
		settle(t, dir)
	}
	settle(t, dir)
	check("clean", true)

	// The same content with a new time: git compares the content.
	now := time.Now()
	if err := os.Chtimes(filepath.Join(dir, "tracked.txt"), now, now); err != nil {
		t.Fatal(err)
	}
	check("touched", true)
	restore()

	// The same size and modification time, other content: the change
	// time still tells.
	p := filepath.Join(dir, "tracked.txt")
	fi, _ := os.Stat(p)
	write(t, dir, "tracked.txt", "two\n")
	if err := os.Chtimes(p, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	check("edited, same size and time", false)
	restore()

	write(t, dir, "d/e/deep.txt", "deeper\n")
	check("edited", false)
	git(t, dir, "add", "d/e/deep.txt")
	check("staged", false)
	restore()

	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	check("deleted", false)
	restore()

	// A leading directory replaced by a symlink to a copy of it: every
	// file under it still lstats the same through the link, but git
	// finds them deleted (and the link and the copy untracked).
	for _, d := range []string{"d", "d/e"} {
		real := filepath.Join(dir, d)
		if err := os.Rename(real, real+"2"); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(filepath.Base(real)+"2", real); err != nil {
			t.Fatal(err)
		}
		check(d+" replaced by a symlink", false)
		if err := os.Remove(real); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(real+"2", real); err != nil {
			t.Fatal(err)
		}
		check(d+" a directory again", true)
	}

	if err := os.Chmod(p, 0o755); err != nil {
		t.Fatal(err)
	}
	check("made executable", false)
	restore()

	// HEAD moved back, the index kept (reset --soft): the index is the
	// tree it was read with, but changes are staged against HEAD now.
	git(t, dir, "reset", "-q", "--soft", "HEAD~1")
	check("HEAD moved since the tip was read", false)
	git(t, dir, "reset", "-q", "--hard", head)
	settle(t, dir)

	git(t, dir, "sparse-checkout", "set", "--no-cone", "/*", "!/sparse/")
	settle(t, dir)
	check("sparse checkout (a file not in the tree)", true)
	git(t, dir, "sparse-checkout", "disable")
	settle(t, dir)

	git(t, dir, "update-index", "--assume-unchanged", "tracked.txt")
	git(t, dir, "write-tree") // the cache tree, which update-index dropped
	write(t, dir, "tracked.txt", "changed but assumed not\n")
	check("assume-unchanged", true)
	git(t, dir, "update-index", "--no-assume-unchanged", "tracked.txt")
	restore()

	write(t, dir, "new.txt", "n\n")
	git(t, dir, "add", "-N", "new.txt")
	check("intent to add", false)
	git(t, dir, "rm", "-q", "--cached", "new.txt")
	os.Remove(filepath.Join(dir, "new.txt"))
	restore()

	for _, v := range []string{"3", "4", "2"} {
		git(t, dir, "update-index", "--index-version", v)
		settle(t, dir)
		check("index version "+v, true)
	}
	git(t, dir, "update-index", "--split-index")
	settle(t, dir)
	check("split index", false)
	git(t, dir, "update-index", "--no-split-index")
	settle(t, dir)

	// A linked worktree, its branch packed.
	wt := filepath.Join(t.TempDir(), "wt")
	git(t, dir, "worktree", "add", "-q", "-b", "side", wt)
	git(t, dir, "pack-refs", "--all")
	settle(t, wt)
	if !repo.Tree(wt).TrackedUnchanged(ctx, head, headTree) {
		t.Error("linked worktree on a packed branch: not proven unchanged")
	}
}

// An entry whose file was modified in the second its index was written
// or later is racily clean: its stat data may match a newer content, so
// its content is compared even when the stat data is the same.
func TestStatEntriesRacy(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "f.txt", "x\n")
	var st syscall.Stat_t
	if err := syscall.Lstat(filepath.Join(dir, "f.txt"), &st); err != nil {
		t.Fatal(err)
	}
	e := statEntry{path: "f.txt", mode: 0o100644, mtime: uint32(st.Mtim.Sec), mtim: uint32(st.Mtim.Nsec),
		ctime: uint32(st.Ctim.Sec), ctimeN: uint32(st.Ctim.Nsec), ino: uint32(st.Ino), uid: st.Uid, gid: st.Gid, size: uint32(st.Size)}
	tree := &Tree{Path: dir}
	if doubt, ok := tree.statEntries([]statEntry{e}, racyRule{index: e.mtime + 1}); !ok || len(doubt) != 0 {
		t.Errorf("settled entry: doubt %v ok %v", doubt, ok)
	}
	if doubt, ok := tree.statEntries([]statEntry{e}, racyRule{index: e.mtime}); !ok || len(doubt) != 1 {
		t.Errorf("racy entry: doubt %v ok %v", doubt, ok)
	}
}

// A racily clean file (written in the second its index was, as right
// after a commit) whose bytes are its blob's is proven unchanged without
// a git process; where a gitattributes file may apply (in the tree, or
// the repository's info/attributes) git hashes it through its filters,
// which here make it changed.
func TestTrackedUnchangedRacyAsIs(t *testing.T) {
	ctx := context.Background()
	tree, dir, cmds := recordedRepo(t)
	head, headTree := git(t, dir, "rev-parse", "HEAD"), git(t, dir, "rev-parse", "HEAD^{tree}")
	index := filepath.Join(dir, ".git", "index")
	racy := func() {
		t.Helper()
		fi, err := os.Stat(filepath.Join(dir, "d", "e", "deep.txt"))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(index, fi.ModTime(), fi.ModTime()); err != nil {
			t.Fatal(err)
		}
		*cmds = nil
	}
	racy()
	if !tree.TrackedUnchanged(ctx, head, headTree) {
		t.Fatal("racily clean tree: not proven unchanged")
	}
	if len(*cmds) != 0 {
		t.Fatalf("racily clean files hashed by git: %q", *cmds)
	}

	git(t, dir, "config", "filter.up.clean", "tr a-z A-Z")
	git(t, dir, "config", "filter.up.smudge", "cat")
	for _, attrs := range []string{filepath.Join(dir, "d", ".gitattributes"), filepath.Join(dir, ".git", "info", "attributes")} {
		write(t, filepath.Dir(attrs), filepath.Base(attrs), "*.txt filter=up\n")
		racy()
		if tree.TrackedUnchanged(ctx, head, headTree) {
			t.Errorf("%s: proven unchanged, but git's filter changes the files", attrs)
		}
		if dirty, err := tree.HasTrackedChanges(ctx); err != nil || !dirty {
			t.Errorf("%s: git says dirty = %v, %v", attrs, dirty, err)
		}
		if err := os.Remove(attrs); err != nil {
			t.Fatal(err)
		}
	}

	// Other bytes of the same size: left to git, which finds them changed.
	p := filepath.Join(dir, "d", "e", "deep.txt")
	fi, _ := os.Stat(p)
	write(t, dir, "d/e/deep.txt", "DEEP\n")
	os.Chtimes(p, fi.ModTime(), fi.ModTime())
	racy()
	if tree.TrackedUnchanged(ctx, head, headTree) {
		t.Error("other bytes: proven unchanged")
	}
}
