package gitcore

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
)

// indexPlain accepts an index of plain entries in every on-disk version,
// and refuses any entry whose staging would differ in a private index.
func TestIndexPlain(t *testing.T) {
	_, dir := snapRepo(t)
	index := filepath.Join(dir, ".git", "index")
	for i := 0; i < 30; i++ { // paths of many lengths: padding and v4 prefixes
		write(t, dir, "dir/"+strings.Repeat("x", i)+".txt", "x\n")
	}
	git(t, dir, "add", "-A")
	for _, c := range []struct {
		name  string
		args  []string
		plain bool
	}{
		{"version 2", []string{"update-index", "--index-version", "2"}, true},
		{"version 3", []string{"update-index", "--index-version", "3"}, true},
		{"version 4", []string{"update-index", "--index-version", "4"}, true},
		{"assume-unchanged", []string{"update-index", "--assume-unchanged", "tracked.txt"}, false},
		{"flag off", []string{"update-index", "--no-assume-unchanged", "tracked.txt"}, true},
		{"skip-worktree", []string{"update-index", "--skip-worktree", "tracked.txt"}, false},
		{"skip-worktree off", []string{"update-index", "--no-skip-worktree", "tracked.txt"}, true},
		{"split index", []string{"update-index", "--split-index"}, false},
		{"split index off", []string{"update-index", "--no-split-index"}, true},
	} {
		git(t, dir, c.args...)
		if got, links := indexPlain(index, 20); got != c.plain || links {
			t.Errorf("%s: indexPlain = %v, want %v", c.name, got, c.plain)
		}
	}
	write(t, dir, "new.txt", "n\n")
	git(t, dir, "add", "-N", "new.txt")
	if plain, _ := indexPlain(index, 20); plain {
		t.Error("intent-to-add: indexPlain = true")
	}
	git(t, dir, "rm", "-q", "--cached", "new.txt")
	sub := strings.TrimSpace(git(t, dir, "rev-parse", "HEAD"))
	git(t, dir, "update-index", "--add", "--cacheinfo", "160000,"+sub+",sub")
	if plain, links := indexPlain(index, 20); !plain || !links {
		t.Errorf("gitlink: indexPlain = %v, %v; want true, true", plain, links)
	}
	if plain, _ := indexPlain(filepath.Join(dir, "no-such-index"), 20); plain {
		t.Error("missing index: indexPlain = true")
	}
}

// spliceTrees writes what write-tree would: changed, added and removed
// files at any depth, directories left empty dropped.
func TestSpliceTreesMatchesWriteTree(t *testing.T) {
	repo, dir := snapRepo(t)
	ctx := context.Background()
	write(t, dir, "a/b/c.txt", "c\n")
	write(t, dir, "a/b/d.txt", "d\n")
	write(t, dir, "a/only/x.txt", "x\n")
	write(t, dir, "a-b.txt", "sorts between a and a/\n")
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "-q", "-m", "more")
	base := strings.TrimSpace(git(t, dir, "rev-parse", "HEAD^{tree}"))
	tr := repo.Tree(dir)

	write(t, dir, "a/b/c.txt", "c changed\n")
	write(t, dir, "a/b/new.txt", "new\n")
	write(t, dir, "a/b.txt", "a file beside the directory a/b\n")
	git(t, dir, "rm", "-q", "a/only/x.txt", "gone.txt")
	changed := []string{"a/b/c.txt", "a/b/new.txt", "a/b.txt", "a/only/x.txt", "gone.txt"}
	bt, err := tr.readTrees(ctx, base, ancestors(changed), nil)
	if err != nil || bt.head == "" || bt.root != base {
		t.Fatalf("readTrees: %+v %v", bt, err)
	}
	trees := bt.trees
	old := map[string]TreeEntry{}
	for _, p := range changed {
		if e, ok := lookupEntry(trees, p); ok {
			old[p] = e
		}
	}
	staged, err := tr.stageSmall(ctx, filepath.Join(dir, ".git"), old, changed, 20)
	if err != nil {
		t.Fatal(err)
	}
	if staged["gone.txt"] != nil || staged["a/only/x.txt"] != nil || staged["a/b/new.txt"] == nil {
		t.Fatalf("staged %v", staged)
	}
	got, err := tr.spliceTrees(ctx, trees, staged, 20)
	if err != nil {
		t.Fatal(err)
	}
	git(t, dir, "add", "-A")
	want := strings.TrimSpace(git(t, dir, "write-tree"))
	if got != want {
		t.Fatalf("spliced %s %v, write-tree %s %v", got, treeFiles(t, dir, got), want, treeFiles(t, dir, want))
	}
	if m, _ := filepath.Glob(filepath.Join(dir, ".git", SnapshotIndexPrefix+"*")); len(m) != 0 {
		t.Fatalf("private index left: %v", m)
	}
}

// A full snapshot spliced into HEAD's tree is the tree the copy of the
// whole index writes, in every state a plain index allows; where the
// index is not plain it takes the index path.
func TestSnapshotSplicedMatchesIndexPath(t *testing.T) {
	tr, dir, rec := recordedRepo(t)
	ctx := context.Background()
	write(t, dir, "crlf.txt", "one\r\ntwo\r\n")
	write(t, dir, "f2d", "a file that becomes a directory\n")
	write(t, dir, "d2f/inner.txt", "a directory that becomes a file\n")
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "-q", "-m", "more")
	req := SnapshotRequest{IncludeUntracked: true, Denylist: []string{".env"}, Exclude: []string{".agency"},
		LeaveOut: NewIgnoreMatcher([]string{"*.bin"}), MaxUntrackedSize: 100}
	check := func(name string, wantSpliced bool) {
		t.Helper()
		*rec = nil
		got, err := tr.SnapshotTree(ctx, req)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		// The spliced way writes its trees itself (or with mktree); the
		// index way with write-tree.
		spliced := true
		for _, c := range *rec {
			spliced = spliced && !strings.HasSuffix(c, "write-tree")
		}
		if got.Tree != "" && got.Tree != got.HeadTree && spliced != wantSpliced {
			t.Fatalf("%s: spliced = %v, want %v (%q)", name, spliced, wantSpliced, *rec)
		}
		viaIndex := req
		viaIndex.Kept = &KeptIndex{}
		defer viaIndex.Kept.Remove()
		want, err := tr.SnapshotTree(ctx, viaIndex)
		if err != nil {
			t.Fatalf("%s: index path: %v", name, err)
		}
		if got.Tree != want.Tree || got.Head != want.Head || strings.Join(got.Denied, ",") != strings.Join(want.Denied, ",") ||
			strings.Join(got.LeftOut, ",") != strings.Join(want.LeftOut, ",") {
			t.Fatalf("%s: spliced %s %v (denied %v, left out %v), index path %s %v (denied %v, left out %v)", name,
				got.Tree, treeFiles(t, dir, got.Tree), got.Denied, got.LeftOut,
				want.Tree, treeFiles(t, dir, want.Tree), want.Denied, want.LeftOut)
		}
	}
	check("clean", false)
	write(t, dir, "tracked.txt", "modified\n")
	check("modified", true)
	git(t, dir, "add", "tracked.txt")
	check("staged", true)
	write(t, dir, "tracked.txt", "staged, then modified again\n")
	check("staged and modified", true)
	os.Remove(filepath.Join(dir, "d/e/deep.txt"))
	check("deleted in the worktree", true)
	git(t, dir, "rm", "-q", "--cached", "d/e/other.txt")
	check("deleted from the index, kept on disk", true)
	git(t, dir, "rm", "-q", "d/solo/only.txt")
	check("git rm of a directory's only file", true)
	write(t, dir, "new/dir/file.txt", "untracked\n")
	write(t, dir, "big.txt", strings.Repeat("big ", 100))
	write(t, dir, "art.bin", "left out\n")
	check("untracked files, one too big, one left out", true)
	os.Chmod(filepath.Join(dir, ".env.example"), 0o755)
	check("executable bit", true)
	os.Remove(filepath.Join(dir, "gone.txt"))
	os.Symlink("tracked.txt", filepath.Join(dir, "gone.txt"))
	check("file turned symlink", true)
	os.Remove(filepath.Join(dir, "f2d"))
	write(t, dir, "f2d/now-a-dir.txt", "x\n")
	check("file turned directory", true)
	os.RemoveAll(filepath.Join(dir, "d2f"))
	write(t, dir, "d2f", "now a file\n")
	check("directory turned file", true)
	// Line endings: the index holds CRLF; with text=auto a CRLF file
	// already in the index stays as it is (git looks at the index entry).
	write(t, dir, ".gitattributes", "*.txt text=auto\n")
	write(t, dir, "crlf.txt", "one\r\ntwo\r\nthree\r\n")
	check("CRLF file under text=auto", true)
	git(t, dir, "config", "core.fileMode", "false")
	os.Chmod(filepath.Join(dir, "tracked.txt"), 0o755)
	write(t, dir, "tracked.txt", "fileMode off\n")
	check("core.fileMode false", true)
	git(t, dir, "config", "core.fileMode", "true")
	// A clean filter and ident: staging runs them as the index path does.
	git(t, dir, "config", "filter.upper.clean", "tr a-z A-Z")
	git(t, dir, "config", "filter.upper.smudge", "cat")
	write(t, dir, ".gitattributes", "*.txt text=auto\n*.up filter=upper\n*.id ident\n")
	write(t, dir, "shout.up", "quiet words\n")
	write(t, dir, "stamp.id", "$Id$\n")
	check("clean filter and ident", true)
	// A repository that splits its index: the private one is not split
	// (no shared index file appears).
	git(t, dir, "config", "core.splitIndex", "true")
	write(t, dir, "tracked.txt", "split index configured\n")
	if _, err := tr.SnapshotTree(ctx, req); err != nil {
		t.Fatal(err)
	}
	if m, _ := filepath.Glob(filepath.Join(dir, ".git", "sharedindex.*")); len(m) != 0 {
		t.Fatalf("shared index files: %v", m)
	}
	check("core.splitIndex", true) // the index path too
	if m, _ := filepath.Glob(filepath.Join(dir, ".git", "sharedindex.*")); len(m) != 0 {
		t.Fatalf("shared index files after the index path: %v", m)
	}
	git(t, dir, "config", "core.splitIndex", "false")
	write(t, dir, "secret/.env", "SECRET=x\n")
	check("denylisted untracked file", false)
	os.RemoveAll(filepath.Join(dir, "secret"))
	git(t, dir, "update-index", "--assume-unchanged", "tracked.txt")
	write(t, dir, "tracked.txt", "behind the flag\n")
	check("assume-unchanged entry", false)
	git(t, dir, "update-index", "--no-assume-unchanged", "tracked.txt")
	write(t, dir, "new.txt", "intent\n")
	git(t, dir, "add", "-N", "new.txt")
	check("intent-to-add", false)
	git(t, dir, "add", "new.txt")
	check("intent-to-add staged", true)
	if m, _ := filepath.Glob(filepath.Join(dir, ".git", SnapshotIndexPrefix+"*")); len(m) != 0 {
		t.Fatalf("private index left: %v", m)
	}
}

// commitAfterStatus runs git, and commits everything right after the
// first full status has looked (HEAD and the index move under it).
type commitAfterStatus struct {
	dir  string
	done *bool
}

func (c commitAfterStatus) Run(ctx context.Context, cmd Cmd) (Result, error) {
	res, err := ExecRunner{}.Run(ctx, cmd)
	if !*c.done && len(cmd.Args) > 0 && cmd.Args[0] == "status" {
		*c.done = true
		for _, args := range [][]string{{"add", "-A"}, {"-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", "under the snapshot"}} {
			if r, err := (ExecRunner{}).Run(ctx, Cmd{Dir: c.dir, Args: args, Env: os.Environ()}); err != nil {
				panic(fmt.Sprintf("%v: %v %s", args, err, r.Stderr))
			}
		}
	}
	return res, err
}

// HEAD moving between the status and the reading of its trees sends the
// spliced snapshot to the index path: never a tree that mixes two HEADs.
func TestSnapshotSplicedHeadMoved(t *testing.T) {
	_, dir := snapRepo(t)
	ctx := context.Background()
	done := false
	repo, err := Discover(ctx, commitAfterStatus{dir, &done}, dir)
	if err != nil {
		t.Fatal(err)
	}
	write(t, dir, "tracked.txt", "changed before the snapshot\n")
	write(t, dir, "new.txt", "new\n")
	snap, err := repo.Tree(dir).SnapshotTree(ctx, SnapshotRequest{IncludeUntracked: true})
	if err != nil || !done {
		t.Fatalf("snapshot: %v (hook ran: %v)", err, done)
	}
	head := strings.TrimSpace(git(t, dir, "rev-parse", "HEAD"))
	tree := strings.TrimSpace(git(t, dir, "rev-parse", "HEAD^{tree}"))
	if snap.Head != head || snap.Tree != tree {
		t.Fatalf("snapshot head %s tree %s %v, want the new HEAD %s and its tree %s %v", snap.Head, snap.Tree, treeFiles(t, dir, snap.Tree), head, tree, treeFiles(t, dir, tree))
	}
}

// In a SHA-256 repository the spliced trees' ids are computed with
// SHA-256 and match git's.
func TestSnapshotSplicedSHA256(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("HOME", dir)
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	git(t, dir, "init", "-q", "--object-format=sha256", "-b", "main")
	write(t, dir, "a/b/c.txt", "c\n")
	write(t, dir, "top.txt", "top\n")
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "-q", "-m", "init")
	ctx := context.Background()
	var cmds []string
	repo, err := Discover(ctx, recorder{&cmds, &sync.Mutex{}}, dir)
	if err != nil {
		t.Fatal(err)
	}
	write(t, dir, "a/b/c.txt", "changed\n")
	write(t, dir, "a/new.txt", "new\n")
	got, err := repo.Tree(dir).SnapshotTree(ctx, SnapshotRequest{IncludeUntracked: true})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(strings.Join(cmds, "\n"), "write-tree") || len(got.Tree) != 64 {
		t.Fatalf("not spliced, or not SHA-256: tree %q, commands %q", got.Tree, cmds)
	}
	kept := &KeptIndex{}
	defer kept.Remove()
	want, err := repo.Tree(dir).SnapshotTree(ctx, SnapshotRequest{IncludeUntracked: true, Kept: kept})
	if err != nil {
		t.Fatal(err)
	}
	if got.Tree != want.Tree {
		t.Fatalf("spliced %s, index path %s", got.Tree, want.Tree)
	}
}

// With HEAD's trees packed, the spliced snapshot reads them with the
// `cat-file --batch` it started while its status ran: one, asked once,
// and the tree is the index path's. With them loose, none is started.
func TestSnapshotSplicedPackedHead(t *testing.T) {
	tr, dir, rec := recordedRepo(t)
	ctx := context.Background()
	req := SnapshotRequest{IncludeUntracked: true, Exclude: []string{".agency"}}
	for _, packed := range []bool{false, true} {
		if packed {
			git(t, dir, "gc", "-q")
		}
		write(t, dir, "d/e/deep.txt", fmt.Sprintf("packed %v\n", packed))
		*rec = nil
		got, err := tr.SnapshotTree(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		all := strings.Join(*rec, "\n")
		if n := strings.Count(all, "cat-file --batch"); strings.Contains(all, "write-tree") || n != map[bool]int{false: 0, true: 1}[packed] {
			t.Fatalf("packed %v: not spliced, or %d cat-file: %q", packed, n, *rec)
		}
		kept := &KeptIndex{}
		want, err := tr.SnapshotTree(ctx, SnapshotRequest{IncludeUntracked: true, Exclude: []string{".agency"}, Kept: kept})
		kept.Remove()
		if err != nil {
			t.Fatal(err)
		}
		if got.Tree != want.Tree || got.HeadTree != want.HeadTree {
			t.Fatalf("packed %v: spliced %s (HEAD %s), index path %s (HEAD %s)", packed, got.Tree, got.HeadTree, want.Tree, want.HeadTree)
		}
	}
}

// readSmallIndex reads what `git ls-files -s` reads of a version 2
// index, in SHA-1 and SHA-256 repositories, with long and short paths,
// an executable and a symlink, and the same of a version 4 index (one
// entry iterator reads every version).
func TestReadSmallIndex(t *testing.T) {
	for _, format := range []string{"sha1", "sha256"} {
		dir := t.TempDir()
		t.Setenv("HOME", dir)
		t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
		git(t, dir, "init", "-q", "--object-format="+format, "-b", "main")
		write(t, dir, "a", "a\n")
		write(t, dir, "dir/with a space/and-a-much-longer-name-than-eight.txt", "long\n")
		write(t, dir, "x.sh", "#!/bin/sh\n")
		os.Chmod(filepath.Join(dir, "x.sh"), 0o755)
		os.Symlink("a", filepath.Join(dir, "link"))
		git(t, dir, "-c", "index.version=2", "add", "-A")
		oidLen := 20
		if format == "sha256" {
			oidLen = 32
		}
		index := filepath.Join(dir, ".git", "index")
		got, ok := readSmallIndex(index, oidLen)
		if !ok {
			t.Fatalf("%s: readSmallIndex declined a version 2 index", format)
		}
		want := map[string]TreeEntry{}
		for _, rec := range strings.Split(git(t, dir, "ls-files", "-s", "-z"), "\x00") {
			if meta, p, ok := strings.Cut(rec, "\t"); ok {
				f := strings.Fields(meta)
				want[p] = TreeEntry{Mode: f[0], OID: f[1]}
			}
		}
		if len(want) != 4 || !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: readSmallIndex %v, ls-files %v", format, got, want)
		}
		git(t, dir, "update-index", "--index-version", "4")
		if got, ok := readSmallIndex(index, oidLen); !ok || !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: readSmallIndex of version 4: %v, %v; ls-files %v", format, got, ok, want)
		}
	}
}
