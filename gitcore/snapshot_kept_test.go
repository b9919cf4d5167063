package gitcore

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// recorder runs git and remembers each command's arguments (a snapshot
// runs some at once).
type recorder struct {
	cmds *[]string
	mu   *sync.Mutex
}

func (r recorder) Run(ctx context.Context, c Cmd) (Result, error) {
	r.mu.Lock()
	*r.cmds = append(*r.cmds, strings.Join(c.Args, " "))
	r.mu.Unlock()
	return ExecRunner{}.Run(ctx, c)
}

// recordedRepo is snapRepo with files two directories down committed, and
// a Tree whose git commands are recorded.
func recordedRepo(t *testing.T) (*Tree, string, *[]string) {
	t.Helper()
	_, dir := snapRepo(t)
	write(t, dir, "d/e/deep.txt", "deep\n")
	write(t, dir, "d/e/other.txt", "other\n")
	write(t, dir, "d/solo/only.txt", "only\n")
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "-q", "-m", "deeper")
	cmds := &[]string{}
	repo, err := Discover(context.Background(), recorder{cmds, &sync.Mutex{}}, dir)
	if err != nil {
		t.Fatal(err)
	}
	return repo.Tree(dir), dir, cmds
}

// An incremental snapshot (the kept index plus the changed paths, or the
// changed tracked files spliced into the last snapshot's tree) is the
// tree a full one makes, step after step; where it cannot be sure it
// takes the full path; left-out files never reach the object store.
func TestSnapshotKeptIndexMatchesFull(t *testing.T) {
	tree, dir, rec := recordedRepo(t)
	ctx := context.Background()
	var kept KeptIndex
	base := SnapshotRequest{IncludeUntracked: true, Denylist: []string{".env"}, Exclude: []string{".agency"},
		LeaveOut: NewIgnoreMatcher([]string{"*.bin"}), MaxUntrackedSize: 100}
	// want: "full", "status" (the kept index, after a status of the
	// changed paths) or "splice" (no status: tracked files spliced).
	var ran []string // the git commands of the last step's snapshot
	step := func(name, want string, changed ...string) *Snapshot {
		t.Helper()
		req := base
		req.Kept, req.Changed = &kept, changed
		if changed == nil {
			req.Changed = nil
		}
		*rec = nil
		snap, err := tree.SnapshotTree(ctx, req)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		ran = append([]string(nil), *rec...)
		got := "full"
		if snap.Incremental {
			got = "splice"
			for _, c := range *rec {
				if strings.HasPrefix(c, "status") {
					got = "status"
				}
			}
		}
		if got != want {
			t.Fatalf("%s: took the %s path, want %s (%q)", name, got, want, *rec)
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
	step("first", "full")
	write(t, dir, "tracked.txt", "two\n")
	step("tracked file changed", "splice", "tracked.txt")
	if len(ran) != 0 {
		t.Fatalf("tracked file changed: git ran %q; its blob is its bytes", ran)
	}
	write(t, dir, "top.txt", "untracked\n")
	step("untracked file added", "status", "top.txt")
	write(t, dir, "n/new.txt", "in a new directory\n")
	step("new directory", "full", "n")
	os.Remove(filepath.Join(dir, "top.txt"))
	step("untracked file removed", "status", "top.txt")
	write(t, dir, "grow.txt", "small\n")
	step("small untracked file", "status", "grow.txt")
	write(t, dir, "grow.txt", strings.Repeat("grown-past-the-limit ", 10))
	if snap := step("grew past the size limit", "status", "grow.txt"); len(snap.LeftOut) != 1 {
		t.Fatalf("left out %v", snap.LeftOut)
	}
	write(t, dir, "art.bin", "binary-artefact-content\n")
	if snap := step("matches a leave-out pattern", "status", "art.bin"); len(snap.LeftOut) != 1 {
		t.Fatalf("left out %v", snap.LeftOut)
	}
	write(t, dir, "tracked.txt", "one\n")
	step("tracked file back as committed", "splice", "tracked.txt")
	write(t, dir, "build/x.o", "ignored\n")
	step("ignored file", "status", "build/x.o")
	os.RemoveAll(filepath.Join(dir, "n"))
	step("directory with a staged untracked file removed", "status", "n")
	os.Remove(filepath.Join(dir, "gone.txt"))
	step("tracked file deleted", "splice", "gone.txt")
	write(t, dir, "d/e/deep.txt", "deeper\n")
	step("tracked file two directories down", "splice", "d/e/deep.txt")
	write(t, dir, "d/e/deep.txt", "deepest\n")
	write(t, dir, "d/e/other.txt", "other, changed\n")
	step("two tracked files in one directory", "splice", "d/e/deep.txt", "d/e/other.txt", "d/e/deep.txt")
	os.Remove(filepath.Join(dir, "d/solo/only.txt"))
	step("the last file of a directory deleted", "splice", "d/solo/only.txt")
	os.Chmod(filepath.Join(dir, "tracked.txt"), 0o755)
	step("executable bit", "splice", "tracked.txt")
	os.Remove(filepath.Join(dir, "d/e/other.txt"))
	os.Symlink("deep.txt", filepath.Join(dir, "d/e/other.txt"))
	step("file turned symlink", "splice", "d/e/other.txt")
	write(t, dir, "tracked.txt", "spliced, then staged with an untracked file\n")
	step("spliced once more", "splice", "tracked.txt")
	write(t, dir, "late-untracked.txt", "x\n")
	step("untracked file after spliced ones", "status", "late-untracked.txt")
	write(t, dir, "tracked.txt", "mixed\n")
	write(t, dir, "mixed-untracked.txt", "y\n")
	step("tracked and untracked together", "status", "tracked.txt", "mixed-untracked.txt")
	write(t, dir, "tracked.txt", "three\n")
	git(t, dir, "add", "tracked.txt")
	step("the worktree's index changed", "full", "tracked.txt")
	git(t, dir, "commit", "-q", "-m", "c")
	write(t, dir, "tracked.txt", "four\n")
	step("HEAD moved (the index too)", "full", "tracked.txt")
	git(t, dir, "update-ref", "HEAD", "HEAD~1")
	write(t, dir, "tracked.txt", "five\n")
	step("HEAD moved alone", "full", "tracked.txt")
	git(t, dir, "update-index", "--assume-unchanged", "d/e/deep.txt")
	step("an assume-unchanged entry", "full", "d/e/deep.txt")
	write(t, dir, "d/e/deep.txt", "changed behind the flag\n")
	step("the flagged file changed", "full", "d/e/deep.txt")
	git(t, dir, "update-index", "--no-assume-unchanged", "d/e/deep.txt")
	step("flag taken off", "full", "d/e/deep.txt")
	write(t, dir, ".gitignore", "build/\n*.o\n")
	step(".gitignore changed", "full", ".gitignore")
	write(t, dir, ".env", "SECRET=incremental-secret\n")
	if snap := step("denylisted file", "full", ".env"); len(snap.Denied) != 1 {
		t.Fatalf("denied %v", snap.Denied)
	}
	os.Remove(filepath.Join(dir, ".env"))
	step("after the denylisted file", "full")
	step("nothing known", "full")

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
