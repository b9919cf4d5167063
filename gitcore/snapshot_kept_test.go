package gitcore

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// An incremental snapshot (the kept index plus the changed paths) is the
// tree a full one makes, step after step; where it cannot be sure it takes
// the full path; left-out files never reach the object store.
func TestSnapshotKeptIndexMatchesFull(t *testing.T) {
	repo, dir := snapRepo(t)
	ctx := context.Background()
	tree := repo.Tree(dir)
	var kept KeptIndex
	base := SnapshotRequest{IncludeUntracked: true, Denylist: []string{".env"}, Exclude: []string{".agency"},
		LeaveOut: NewIgnoreMatcher([]string{"*.bin"}), MaxUntrackedSize: 100}
	step := func(name string, wantIncremental bool, changed ...string) *Snapshot {
		t.Helper()
		req := base
		req.Kept, req.Changed = &kept, changed
		if changed == nil {
			req.Changed = nil
		}
		snap, err := tree.SnapshotTree(ctx, req)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if snap.Incremental != wantIncremental {
			t.Fatalf("%s: incremental = %v, want %v", name, snap.Incremental, wantIncremental)
		}
		if len(snap.Denied) > 0 {
			return snap
		}
		full, err := tree.SnapshotTree(ctx, base)
		if err != nil {
			t.Fatalf("%s: full: %v", name, err)
		}
		if snap.Tree != full.Tree || snap.Head != full.Head {
			t.Fatalf("%s: tree %s (%v), a full snapshot makes %s (%v)", name, snap.Tree,
				treeFiles(t, dir, snap.Tree), full.Tree, treeFiles(t, dir, full.Tree))
		}
		return snap
	}
	write(t, dir, ".agency/.gitignore", "*\n")
	step("first", false)
	write(t, dir, "tracked.txt", "two\n")
	step("tracked file changed", true, "tracked.txt")
	write(t, dir, "top.txt", "untracked\n")
	step("untracked file added", true, "top.txt")
	write(t, dir, "n/new.txt", "in a new directory\n")
	step("new directory", false, "n")
	os.Remove(filepath.Join(dir, "top.txt"))
	step("untracked file removed", true, "top.txt")
	write(t, dir, "grow.txt", "small\n")
	step("small untracked file", true, "grow.txt")
	write(t, dir, "grow.txt", strings.Repeat("grown-past-the-limit ", 10))
	if snap := step("grew past the size limit", true, "grow.txt"); len(snap.LeftOut) != 1 {
		t.Fatalf("left out %v", snap.LeftOut)
	}
	write(t, dir, "art.bin", "binary-artefact-content\n")
	if snap := step("matches a leave-out pattern", true, "art.bin"); len(snap.LeftOut) != 1 {
		t.Fatalf("left out %v", snap.LeftOut)
	}
	write(t, dir, "tracked.txt", "one\n")
	step("tracked file back as committed", false, "tracked.txt")
	write(t, dir, "build/x.o", "ignored\n")
	step("ignored file", true, "build/x.o")
	os.RemoveAll(filepath.Join(dir, "n"))
	step("directory with a staged untracked file removed", true, "n")
	os.Remove(filepath.Join(dir, "gone.txt"))
	step("tracked file deleted", true, "gone.txt")
	write(t, dir, "tracked.txt", "three\n")
	git(t, dir, "add", "tracked.txt")
	step("the worktree's index changed", false, "tracked.txt")
	git(t, dir, "commit", "-q", "-m", "c")
	write(t, dir, "tracked.txt", "four\n")
	step("HEAD moved (the index too)", false, "tracked.txt")
	git(t, dir, "update-ref", "HEAD", "HEAD~1")
	write(t, dir, "tracked.txt", "five\n")
	step("HEAD moved alone", false, "tracked.txt")
	write(t, dir, ".gitignore", "build/\n*.o\n")
	step(".gitignore changed", false, ".gitignore")
	write(t, dir, ".env", "SECRET=incremental-secret\n")
	if snap := step("denylisted file", false, ".env"); len(snap.Denied) != 1 {
		t.Fatalf("denied %v", snap.Denied)
	}
	os.Remove(filepath.Join(dir, ".env"))
	step("after the denylisted file", false)
	step("nothing known", false)

	objs := git(t, dir, "cat-file", "--batch-all-objects", "--batch")
	for _, s := range []string{"grown-past-the-limit", "binary-artefact-content", "incremental-secret"} {
		if strings.Contains(objs, s) {
			t.Errorf("the object store holds %q", s)
		}
	}
	path := kept.path
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("kept index: %v", err)
	}
	kept.Remove()
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("kept index not removed: %v", err)
	}
}

// lateFile runs git, and creates a file right after the incremental
// snapshot's status has looked.
type lateFile struct {
	path, content string
}

func (l lateFile) Run(ctx context.Context, c Cmd) (Result, error) {
	res, err := ExecRunner{}.Run(ctx, c)
	if len(c.Args) > 0 && c.Args[0] == "status" && strings.Contains(strings.Join(c.Args, " "), "--branch") {
		os.WriteFile(l.path, []byte(l.content), 0o644)
	}
	return res, err
}

// A file that appears between the status and the staging is never hashed
// unchecked (here: one a leave-out pattern names).
func TestSnapshotKeptIndexLateFile(t *testing.T) {
	_, dir := snapRepo(t)
	ctx := context.Background()
	repo, err := Discover(ctx, lateFile{filepath.Join(dir, "late.bin"), "late-artefact-content\n"}, dir)
	if err != nil {
		t.Fatal(err)
	}
	var kept KeptIndex
	req := SnapshotRequest{IncludeUntracked: true, Exclude: []string{".agency"}, LeaveOut: NewIgnoreMatcher([]string{"*.bin"}), Kept: &kept}
	if _, err := repo.Tree(dir).SnapshotTree(ctx, req); err != nil {
		t.Fatal(err)
	}
	req.Changed = []string{"late.bin"}
	snap, err := repo.Tree(dir).SnapshotTree(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := treeFiles(t, dir, snap.Tree)["late.bin"]; ok {
		t.Fatal("late.bin is in the snapshot")
	}
	if objs := git(t, dir, "cat-file", "--batch-all-objects", "--batch"); strings.Contains(objs, "late-artefact-content") {
		t.Fatal("late.bin's content reached the object store")
	}
	kept.Remove()
}
