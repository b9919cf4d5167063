package gitcore

import (
	"bufio"
	"bytes"
	"context"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path"
	"sort"
	"strconv"
	"strings"

	"github.com/git-agency/git-agency/gitcore/internal/index"
)

// Writing a snapshot through an index of the whole worktree costs two
// full reads and writes of it (update-index, then write-tree): about
// 20 ms for 20,000 files, whatever the change. A snapshot that changes a
// few paths of a known tree can instead be written as those paths' new
// entries spliced into it: the entries come from `git update-index` on a
// private index that holds those paths alone (so the content is what
// staging them in the full index would give: the same filters, modes and
// line-ending rules, which look at the path's entry there), and the trees
// along their paths are rewritten (`git mktree`). The result is the tree
// write-tree would write; both paths build it from the same entries.

// TreeEntry is one entry of a tree: its mode as git writes it in a tree
// ("100644", "100755", "120000", "160000", "40000") and its object id.
type TreeEntry struct {
	Mode, OID string
}

func (e TreeEntry) isTree() bool { return e.Mode == "40000" }

// isFile: a blob (regular, executable or symlink), what update-index
// stages from a file.
func (e TreeEntry) isFile() bool {
	return e.Mode == "100644" || e.Mode == "100755" || e.Mode == "120000"
}

type namedEntry struct {
	name string
	TreeEntry
}

// baseTrees is what readTrees read.
type baseTrees struct {
	// head is HEAD's commit id ("" on an unborn branch), root the base's
	// root tree id.
	head, root string
	// trees holds the base's trees by directory ("" is the root); a path
	// that is something else in the base maps to nil, one it lacks is
	// missing.
	trees map[string][]namedEntry
}

// readTrees reads, with one `git cat-file --batch`, HEAD's commit id and
// the trees at dirs of base (a tree or a commit; dirs are relative to its
// root tree, "" the root itself).
//
// When they are all loose objects, they are read from their files instead
// (readTreesFromFiles). batch, when not nil, is a `cat-file --batch`
// started ahead (startTreeReader), asked instead of a new one.
func (t *Tree) readTrees(ctx context.Context, base string, dirs []string, batch *started) (*baseTrees, error) {
	if bt, ok := t.readTreesFromFiles(base, dirs); ok {
		return bt, nil
	}
	var in strings.Builder
	in.WriteString("HEAD^{commit}\n")
	for _, d := range dirs {
		if strings.ContainsAny(d, "\n") {
			return nil, fmt.Errorf("path with a newline: %q", d)
		}

		if d == "" {
			in.WriteString(base + "^{tree}\n")
		} else {
			in.WriteString(base + ":" + d + "\n")
		}
	}

	var out []byte
	var err error
	if batch != nil {
		out, err = batch.finish([]byte(in.String()))
	} else {
		out, err = t.exec(ctx, []string{"GIT_OPTIONAL_LOCKS=0"}, []byte(in.String()), "cat-file", "--batch")
	}
	if err != nil {
		return nil, err
	}

	r := bufio.NewReader(bytes.NewReader(out))
	oidLen := len(base) / 2
	bt := &baseTrees{trees: map[string][]namedEntry{}}
	for i := -1; i < len(dirs); i++ {
		oid, kind, body, err := readBatchObject(r)
		switch {
		case err != nil:
			return nil, err
		case kind == "missing":
			continue
		case i < 0:
			bt.head = oid
			continue
		case dirs[i] == "":
			bt.root = oid
		}

		if kind != "tree" {
			bt.trees[dirs[i]] = nil
			continue
		}

		if bt.trees[dirs[i]], err = parseTree(body, oidLen); err != nil {
			return nil, err
		}
	}

	return bt, nil
}

// headTreesFor reads HEAD's trees above the listed paths and at the
// excluded ones; nil when that fails, HEAD is not head any more, or HEAD
// has an excluded path (the index path takes it out first). batch, when
// not nil, is the `cat-file --batch` started for it (startTreeReader).
func (t *Tree) headTreesFor(ctx context.Context, head string, list []StatusEntry, exclude []string, batch *started) *baseTrees {
	paths := make([]string, 0, len(list))
	for _, e := range list {
		paths = append(paths, e.Path)
	}

	dirs := ancestors(paths)
	for _, e := range exclude {
		dirs = append(dirs, strings.Trim(e, "/"))
	}

	bt, err := t.readTrees(ctx, head, dirs, batch)
	if err != nil || bt.head != head || bt.root == "" {
		return nil
	}

	for _, e := range exclude {
		if _, inHead := bt.trees[strings.Trim(e, "/")]; inHead {
			return nil
		}
	}

	return bt
}

// readBatchObject reads one object of `git cat-file --batch` output: its
// id, type ("missing" when there is none) and content.
func readBatchObject(r *bufio.Reader) (string, string, []byte, error) {
	line, err := r.ReadString('\n')
	if err != nil {
		return "", "", nil, fmt.Errorf("cat-file: short output")
	}

	f := strings.Fields(line)
	if len(f) == 2 && f[1] == "missing" {
		return "", "missing", nil, nil
	}
	if len(f) != 3 {
		return "", "", nil, fmt.Errorf("cat-file: %q", line)
	}

	size, err := strconv.Atoi(f[2])
	if err != nil {
		return "", "", nil, fmt.Errorf("cat-file: %q", line)
	}

	body := make([]byte, size+1) // and the newline after it
	if _, err := io.ReadFull(r, body); err != nil {
		return "", "", nil, fmt.Errorf("cat-file: short object")
	}

	return f[0], f[1], body[:size], nil
}

// parseTree decodes a tree object's body.
func parseTree(b []byte, oidLen int) ([]namedEntry, error) {
	var out []namedEntry
	for len(b) > 0 {
		sp := bytes.IndexByte(b, ' ')
		nul := bytes.IndexByte(b, 0)
		if sp < 0 || nul < sp || nul+1+oidLen > len(b) {
			return nil, fmt.Errorf("malformed tree")
		}

		out = append(out, namedEntry{name: string(b[sp+1 : nul]),
			TreeEntry: TreeEntry{Mode: string(b[:sp]), OID: hex.EncodeToString(b[nul+1 : nul+1+oidLen])}})
		b = b[nul+1+oidLen:]
	}

	return out, nil
}

// stageSmall stages paths from their files into a private index that
// holds old's entries (the paths' entries in the index they would be
// staged into; a path without one is added as new) and returns what it
// holds for each path afterwards: nil for a path it removed (gone from
// the worktree). dir is where the private index is made (the worktree's
// git directory, like SnapshotTree's temp indexes).
func (t *Tree) stageSmall(ctx context.Context, dir string, old map[string]TreeEntry, paths []string, oidLen int) (map[string]*TreeEntry, error) {
	f, err := os.CreateTemp(dir, SnapshotIndexPrefix+strconv.Itoa(os.Getpid())+"-*")
	if err != nil {
		return nil, err
	}

	tmp := f.Name()
	f.Close()
	os.Remove(tmp) // git starts from an empty index; the name stays ours
	defer os.Remove(tmp)
	env := []string{"GIT_INDEX_FILE=" + tmp}
	args := privateIndex("-c", "index.version=2", "update-index", "--add", "--remove")
	for _, p := range paths {
		if e, ok := old[p]; ok {
			args = append(args, "--cacheinfo", e.Mode+","+e.OID+","+p)
		}
	}

	args = append(args, "--")
	args = append(args, paths...)
	if _, err := t.runEnv(ctx, env, nil, args...); err != nil {
		return nil, err
	}

	staged := make(map[string]*TreeEntry, len(paths))
	for _, p := range paths {
		staged[p] = nil
	}

	// The private index is read here rather than by `git ls-files`: one
	// process less on every checkpoint's way.
	ents, ok := readSmallIndex(tmp, oidLen)
	if !ok {
		return t.stagedByLsFiles(ctx, env, staged)
	}

	for p, e := range ents {
		if _, want := staged[p]; !want {
			return nil, fmt.Errorf("index: unexpected path %q", p)
		}
		staged[p] = &TreeEntry{Mode: e.Mode, OID: e.OID}
	}

	return staged, nil
}

// stagedByLsFiles fills staged from `git ls-files -s` of the private index
// in env: the way taken when the index file is not one readSmallIndex
// reads.
func (t *Tree) stagedByLsFiles(ctx context.Context, env []string, staged map[string]*TreeEntry) (map[string]*TreeEntry, error) {
	out, err := t.exec(ctx, env, nil, "ls-files", "-s", "-z")
	if err != nil {
		return nil, err
	}

	for _, rec := range strings.Split(string(out), "\x00") {
		if rec == "" {
			continue
		}

		meta, p, ok := strings.Cut(rec, "\t")
		f := strings.Fields(meta)
		if !ok || len(f) != 3 || f[2] != "0" {
			return nil, fmt.Errorf("ls-files: %q", rec)
		}
		if _, want := staged[p]; !want {
			return nil, fmt.Errorf("ls-files: unexpected path %q", p)
		}

		mode := f[0]
		if mode == "040000" {
			mode = "40000"
		}

		staged[p] = &TreeEntry{Mode: mode, OID: f[1]}
	}

	return staged, nil
}

// readSmallIndex reads an index file's entries (all at stage 0, with no
// flag) by path, with oidLen-byte object ids; ok is false for anything
// else (a stage, a flag, a short or malformed file).
func readSmallIndex(p string, oidLen int) (map[string]TreeEntry, bool) {
	data, err := os.ReadFile(p)
	if err != nil {
		return nil, false
	}

	it, ok := index.Entries(data, oidLen)
	if !ok {
		return nil, false
	}

	ents := map[string]TreeEntry{}
	for it.Next() {
		e := it.Entry()
		if e.Flags != 0 || e.ExtFlags != 0 {
			return nil, false // a stage, assume-unchanged or extended flags
		}
		ents[string(e.Path)] = TreeEntry{Mode: strconv.FormatUint(uint64(e.Mode), 8), OID: hex.EncodeToString(e.OID)}
	}

	_, ok = it.Extensions()
	return ents, ok
}

// privateIndex is a git command writing one of our private indexes (a
// snapshot's copy, the kept index, the small one): never split, so that
// no shared index file is left in the git directory on every snapshot of
// a repository with core.splitIndex, and asking no file system monitor.
func privateIndex(args ...string) []string {
	return append([]string{"-c", "core.splitIndex=false", "-c", "core.fsmonitor=false"}, args...)
}

// ancestors lists the directories above each path, the root ("") included.
func ancestors(paths []string) []string {
	seen := map[string]bool{"": true}
	out := []string{""}
	for _, p := range paths {
		for d := path.Dir(p); d != "." && !seen[d]; d = path.Dir(d) {
			seen[d] = true
			out = append(out, d)
		}
	}
	return out
}

// spliceTrees writes base with each path of changes set to its entry
// (nil: removed) and returns the new root tree. trees holds base's trees
// at the ancestors of the changed paths (readTrees; one base lacks is
// missing). Trees left empty
// are dropped, as write-tree drops them. The tree ids are computed here
// and must be the ones `git mktree` writes; any difference is an error.
func (t *Tree) spliceTrees(ctx context.Context, trees map[string][]namedEntry, changes map[string]*TreeEntry, oidLen int) (string, error) {
	byDir := map[string]map[string]*TreeEntry{}
	paths := make([]string, 0, len(changes))
	for p, e := range changes {
		paths = append(paths, p)
		setEntry(byDir, p, e)
	}

	var batch bytes.Buffer
	var want []string
	var bodies [][]byte
	root := ""

	// Every directory above a change, whether base has it or not (a file
	// turned directory: it starts empty), deepest first: a directory's
	// subtrees are written before it.
	for _, d := range deepestFirst(ancestors(paths)) {
		ents := map[string]TreeEntry{}
		for _, e := range trees[d] {
			ents[e.name] = e.TreeEntry
		}

		for name, e := range byDir[d] {
			if e == nil {
				delete(ents, name)
			} else {
				ents[name] = *e
			}
		}

		if len(ents) == 0 && d != "" {
			setEntry(byDir, d, nil)
			continue
		}
		body := treeBody(ents)
		id := objectID("tree", body, oidLen)
		for _, name := range sortedTreeNames(ents) {
			e := ents[name]
			fmt.Fprintf(&batch, "%s %s %s\t%s\x00", e.Mode, objectType(e.Mode), e.OID, name)
		}

		batch.WriteByte(0)
		want = append(want, id)
		bodies = append(bodies, body)
		if d == "" {
			root = id
		} else {
			setEntry(byDir, d, &TreeEntry{Mode: "40000", OID: id})
		}
	}

	if root == "" {
		return "", fmt.Errorf("the snapshot would be empty")
	}
	if t.repo.looseWritable() {
		return root, t.repo.writeTrees(bodies, want, oidLen)
	}
	return root, t.mktree(ctx, batch.Bytes(), want)
}

// writeTrees writes the tree objects of bodies as loose objects (see
// writeLoose), checking that their ids are want.
func (r *Repo) writeTrees(bodies [][]byte, want []string, oidLen int) error {
	for i, body := range bodies {
		id, err := r.writeLoose("tree", body, oidLen)
		if err != nil {
			return err
		}
		if id != want[i] {
			return fmt.Errorf("wrote tree %s, want %s", id, want[i])
		}
	}
	return nil
}

// mktree writes the trees of batch (`git mktree -z --batch` input) and
// checks that their ids are want.
func (t *Tree) mktree(ctx context.Context, batch []byte, want []string) error {
	out, err := t.exec(ctx, nil, batch, "mktree", "-z", "--batch")
	if err != nil {
		return err
	}

	got := strings.Fields(string(out))
	if len(got) != len(want) {
		return fmt.Errorf("mktree wrote %d trees, want %d", len(got), len(want))
	}

	for i := range got {
		if got[i] != want[i] {
			return fmt.Errorf("mktree wrote %s, want %s", got[i], want[i])
		}
	}

	return nil
}

// deepestFirst orders directories by depth, deepest first ("" last).
func deepestFirst(dirs []string) []string {
	depth := func(d string) int {
		if d == "" {
			return 0
		}
		return strings.Count(d, "/") + 1
	}
	sort.Slice(dirs, func(i, j int) bool {
		if di, dj := depth(dirs[i]), depth(dirs[j]); di != dj {
			return di > dj
		}
		return dirs[i] < dirs[j]
	})
	return dirs
}

// setEntry records p's new entry (nil: gone) in its directory's changes.
// A directory left empty does not take the place of a file staged at its
// path (a directory turned file).
func setEntry(byDir map[string]map[string]*TreeEntry, p string, e *TreeEntry) {
	parent := path.Dir(p)
	if parent == "." {
		parent = ""
	}
	if byDir[parent] == nil {
		byDir[parent] = map[string]*TreeEntry{}
	}

	name := path.Base(p)
	if prev := byDir[parent][name]; e == nil && prev != nil && !prev.isTree() {
		return
	}

	byDir[parent][name] = e
}

func objectType(mode string) string {
	switch mode {
	case "40000":
		return "tree"
	case "160000":
		return "commit"
	}
	return "blob"
}

// sortedTreeNames orders entries as git orders a tree: by name, a
// directory's name compared as if it ended in "/".
func sortedTreeNames(ents map[string]TreeEntry) []string {
	names := make([]string, 0, len(ents))
	for n := range ents {
		names = append(names, n)
	}

	key := func(n string) string {
		if ents[n].isTree() {
			return n + "/"
		}
		return n
	}
	sort.Slice(names, func(i, j int) bool { return key(names[i]) < key(names[j]) })
	return names
}

// treeBody is the body of the tree object holding ents.
func treeBody(ents map[string]TreeEntry) []byte {
	var body bytes.Buffer
	for _, name := range sortedTreeNames(ents) {
		e := ents[name]
		raw, _ := hex.DecodeString(e.OID)
		body.WriteString(e.Mode + " " + name + "\x00")
		body.Write(raw)
	}
	return body.Bytes()
}
