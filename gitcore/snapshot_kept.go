package gitcore

import (
	"context"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
)

// keptIndexPrefix names the index a KeptIndex keeps in a worktree's git
// directory. It is not a SnapshotIndexPrefix temp file: it lives as long
// as its checkpointer, however long the agent stays quiet.
const keptIndexPrefix = "agency-checkpointer-index-"

// maxChanged bounds the paths an incremental snapshot looks at; more go
// through the full status (one command line of pathspecs each).
const maxChanged = 1000

// KeptIndex is the index of a worktree's last snapshot, kept for the next
// one (a checkpointer's: it knows from file events which paths changed).
// A snapshot from it stages only the changed paths, after one `git status`
// limited to them on the worktree's own index, and so costs a fraction of
// a full one. That is the same tree as a full snapshot's as long as
//   - the worktree's index and HEAD are unchanged since the kept index was
//     derived from them (checked: the index file's size, time and inode,
//     and the status's branch.oid);
//   - the kept index is the one this process wrote (checked the same way);
//   - every changed path was reported (the caller's side: it passes nil
//     after a lost event), and none of them is a .gitignore, a directory,
//     a nested repository, a file the denylist names, or a file the
//     status does not list although it is there (unchanged, or created
//     after the status looked: never hashed unchecked) (checked: any of
//     these takes the full path).
//
// Otherwise the snapshot takes the full path, which derives the kept index
// afresh. The zero value is ready to use; Remove deletes the file.
type KeptIndex struct {
	path           string
	indexPath      string // the worktree's own index
	head, headTree string
	index, self    stamp
	// staged: untracked files (in the worktree's index) staged into it.
	staged map[string]bool
	ok     bool
	// tree is the last snapshot's tree. A snapshot whose changed paths
	// are all tracked files splices them into it (snapshotTracked)
	// without touching the kept index: pending lists the paths the kept
	// index has not staged since. plain: the worktree's index, when the
	// kept index was derived, held only plain entries (indexPlain).
	tree    string
	pending map[string]bool
	plain   bool
}

// stamp identifies one version of a file: git replaces an index by a
// rename, so a new version has another inode, and usually another time.
type stamp struct {
	size, mtime int64
	ino         uint64
}

func stampOf(path string) stamp {
	fi, err := os.Stat(path)
	if err != nil {
		return stamp{}
	}
	s := stamp{size: fi.Size(), mtime: fi.ModTime().UnixNano()}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		s.ino = uint64(st.Ino)
	}
	return s
}

// Remove deletes the kept index file.
func (k *KeptIndex) Remove() {
	if k.path != "" {
		os.Remove(k.path)
	}
	k.ok = false
}

// refresh copies the worktree's index over the kept one (made next to it
// on first use) and returns its path.
func (k *KeptIndex) refresh(index string) (string, error) {
	if k.path == "" || filepath.Dir(k.path) != filepath.Dir(index) {
		f, err := os.CreateTemp(filepath.Dir(index), keptIndexPrefix+"*")
		if err != nil {
			return "", err
		}
		f.Close()
		k.Remove()
		k.path = f.Name()
	}
	return copyIndex(index, k.path)
}

// derived records a full snapshot's kept index.
func (k *KeptIndex) derived(indexPath string, index stamp, snap *Snapshot, staged map[string]bool) {
	k.indexPath, k.index, k.self = indexPath, index, stampOf(k.path)
	k.head, k.headTree = snap.Head, snap.HeadTree
	k.staged = staged
	k.tree, k.pending = snap.Tree, nil
	if snap.Head != "" {
		k.plain, _ = indexPlain(indexPath, len(snap.Head)/2)
	}
	k.ok = index != (stamp{}) && k.self != (stamp{})
}

// snapshotChanged is SnapshotTree's incremental path. ok is false (and
// nothing was written) when it cannot be sure and the full path must run.
func (t *Tree) snapshotChanged(ctx context.Context, req SnapshotRequest, k *KeptIndex) (*Snapshot, bool, error) {
	if len(req.Changed)+len(k.pending) > maxChanged || stampOf(k.path) != k.self {
		return nil, false, nil
	}
	if k.indexPath == "" || stampOf(k.indexPath) != k.index {
		return nil, false, nil
	}
	if snap, ok := t.snapshotTracked(ctx, req, k); ok {
		return snap, true, nil
	}

	changed := map[string]bool{}
	args := []string{"status", "--porcelain=v2", "-z", "--branch", "--no-renames",
		"--untracked-files=all", "--ignored=matching", snapshotSubmodules, "--"}

	// What the tracked path spliced since, the kept index stages now.
	all := append([]string(nil), req.Changed...)
	for p := range k.pending {
		all = append(all, p)
	}

	for _, p := range all {
		p = strings.Trim(filepath.ToSlash(p), "/")
		if p == "" || changed[p] || excluded(p, req.Exclude) {
			continue
		}
		if p == ".gitignore" || strings.HasSuffix(p, "/.gitignore") {
			return nil, false, nil // what is ignored may have changed anywhere
		}
		if fi, err := os.Lstat(filepath.Join(t.Path, filepath.FromSlash(p))); err == nil && fi.IsDir() {
			return nil, false, nil // a new directory: events inside it may be lost
		}

		changed[p] = true
		args = append(args, ":(literal)"+p)
	}

	if len(changed) == 0 {
		return nil, false, nil
	}

	// The worktree's own index, as the full path's copy of it would be.
	out, err := t.exec(ctx, []string{"GIT_OPTIONAL_LOCKS=0"}, nil, args...)
	if err != nil {
		return nil, false, nil
	}
	if head := statusHead(out); head != k.head {
		return nil, false, nil
	}

	entries, err := parseStatusV2(out)
	if err != nil {
		return nil, false, nil
	}

	listed := map[string]StatusEntry{}
	var dirs []StatusEntry // ignored or untracked directories, "dir/"
	for _, e := range entries {
		if strings.HasSuffix(e.Path, "/") {
			dirs = append(dirs, e)
			continue
		}
		listed[e.Path] = e
	}

	inDir := func(p string, kind StatusKind) bool {
		for _, d := range dirs {
			if d.Kind == kind && strings.HasPrefix(p, d.Path) {
				return true
			}
		}
		return false
	}

	// Every path to decide: the changed ones, what the status found under
	// them, and the untracked files staged earlier under a path that is gone.
	decide := map[string]bool{}
	for p := range changed {
		decide[p] = true
		if _, err := os.Lstat(filepath.Join(t.Path, filepath.FromSlash(p))); os.IsNotExist(err) {
			for u := range k.staged {
				if strings.HasPrefix(u, p+"/") {
					decide[u] = true
				}
			}
		}
	}

	for p := range listed {
		decide[p] = true
	}

	paths := make([]string, 0, len(decide))
	for p := range decide {
		paths = append(paths, p)
	}

	sort.Strings(paths)

	snap := &Snapshot{Head: k.head, HeadTree: k.headTree, Incremental: true}
	var stage, drop []byte
	staged := map[string]bool{}
	for u := range k.staged {
		staged[u] = true
	}

	for _, p := range paths {
		if excluded(p, req.Exclude) {
			continue
		}

		e, ok := listed[p]
		switch {
		case ok && e.Kind == StatusIgnored, !ok && inDir(p, StatusIgnored):
			if staged[p] {
				drop = append(append(drop, p...), 0)
				delete(staged, p)
			}
		case !ok && inDir(p, StatusUntracked):
			return nil, false, nil // inside a nested repository
		case ok && e.Kind == StatusUntracked:
			if !req.IncludeUntracked {
				continue
			}

			if t.LeavesOut(req, p) {
				snap.LeftOut = append(snap.LeftOut, p)
				if staged[p] {
					drop = append(append(drop, p...), 0)
					delete(staged, p)
				}
				continue
			}

			if Denied(p, req.Denylist) {
				return nil, false, nil // the full path reports it
			}

			staged[p] = true
			stage = append(append(stage, p...), 0)
		case ok && e.NotInHead && Denied(p, req.Denylist):
			return nil, false, nil
		case ok:
			// A tracked file changed in the index or the files (deleted
			// too): tracked content is always snapshotted.
			stage = append(append(stage, p...), 0)
		case k.pending[p]:
			// A tracked file spliced since the kept index was written,
			// unchanged from the worktree's index now: staged from its
			// file, as the splice did (tracked content is always
			// snapshotted).
			stage = append(append(stage, p...), 0)
		default:
			// Unlisted: gone, or unchanged (the kept index may hold an
			// older version), or created after the status ran, which
			// must not be hashed unchecked. Gone is removed without
			// looking at the file again; anything else takes the full
			// path.
			if _, err := os.Lstat(filepath.Join(t.Path, filepath.FromSlash(p))); !os.IsNotExist(err) {
				return nil, false, nil
			}
			delete(staged, p)
			drop = append(append(drop, p...), 0)
		}
	}

	env := []string{"GIT_INDEX_FILE=" + k.path}

	// From here on the kept index changes: a failure leaves it unusable.
	k.ok = false
	if len(stage) > 0 {
		if _, err := t.runEnv(ctx, env, stage, privateIndex("update-index", "--add", "--remove", "-z", "--stdin")...); err != nil {
			return nil, false, nil
		}
	}

	if len(drop) > 0 {
		if _, err := t.runEnv(ctx, env, drop, privateIndex("update-index", "--force-remove", "-z", "--stdin")...); err != nil {
			return nil, false, nil
		}
	}

	out, err = t.runEnv(ctx, env, nil, privateIndex("write-tree")...)
	if err != nil {
		return nil, false, nil
	}

	snap.Tree = strings.TrimSpace(string(out))
	k.self, k.staged, k.ok = stampOf(k.path), staged, true
	k.tree, k.pending = snap.Tree, nil
	return snap, true, nil
}

// snapshotTracked is the incremental path for changed paths that are all
// tracked files of the last snapshot: their new entries, staged from
// their files into a private index that holds their old ones, are
// spliced into its tree. The worktree's index is unchanged since the
// kept index was derived (checked by the caller) and held only plain
// entries then, so a path in the last snapshot that is no untracked file
// staged by it is in that index, and its entry there was staged from
// its file as it is here. HEAD is checked. ok is false, with nothing
// changed, whenever a path is anything else (untracked, new, a
// directory, a .gitignore, a denylisted name) or a step fails: the
// status path decides then.
func (t *Tree) snapshotTracked(ctx context.Context, req SnapshotRequest, k *KeptIndex) (*Snapshot, bool) {
	if !k.plain || k.tree == "" {
		return nil, false
	}

	paths, ok := t.trackedCandidates(req, k)
	if !ok {
		return nil, false
	}

	bt, err := t.readTrees(ctx, k.tree, ancestors(paths), nil)
	if err != nil || bt.head != k.head {
		return nil, false
	}

	old, ok := filesIn(bt.trees, paths)
	if !ok {
		return nil, false
	}

	staged, err := t.stageFew(ctx, filepath.Dir(k.indexPath), old, paths, len(k.tree)/2)
	if err != nil || !onlyFiles(staged) {
		return nil, false
	}

	root, err := t.spliceTrees(ctx, bt.trees, staged, len(k.tree)/2)
	if err != nil {
		return nil, false
	}
	if k.pending == nil {
		k.pending = map[string]bool{}
	}
	for _, p := range paths {
		k.pending[p] = true
	}

	k.tree = root
	return &Snapshot{Head: k.head, HeadTree: k.headTree, Tree: root, Incremental: true}, true
}

// trackedCandidates lists the changed paths for snapshotTracked; ok is
// false when there is none, or one that is surely no tracked file (a
// directory, a staged untracked file) or changes more than itself (a
// .gitignore), or a denylisted name.
func (t *Tree) trackedCandidates(req SnapshotRequest, k *KeptIndex) ([]string, bool) {
	seen := map[string]bool{}
	var paths []string
	for _, p := range req.Changed {
		p = strings.Trim(filepath.ToSlash(p), "/")
		if p == "" || seen[p] || excluded(p, req.Exclude) {
			continue
		}

		seen[p] = true
		if strings.Contains(p, "\n") || p == ".gitignore" || strings.HasSuffix(p, "/.gitignore") || k.staged[p] || Denied(p, req.Denylist) {
			return nil, false
		}
		if fi, err := os.Lstat(filepath.Join(t.Path, filepath.FromSlash(p))); err == nil && fi.IsDir() {
			return nil, false
		}

		paths = append(paths, p)
	}

	return paths, len(paths) > 0
}

// filesIn returns the paths' entries in trees; ok is false unless each
// is a file (a blob or a symlink).
func filesIn(trees map[string][]namedEntry, paths []string) (map[string]TreeEntry, bool) {
	old := map[string]TreeEntry{}
	for _, p := range paths {
		e, ok := lookupEntry(trees, p)
		if !ok || !e.isFile() {
			return nil, false
		}
		old[p] = e
	}
	return old, true
}

// onlyFiles: every staged entry is a file or removed (no gitlink).
func onlyFiles(staged map[string]*TreeEntry) bool {
	for _, e := range staged {
		if e != nil && !e.isFile() {
			return false
		}
	}
	return true
}

// lookupEntry finds path p's entry in trees (readTrees of its ancestors).
func lookupEntry(trees map[string][]namedEntry, p string) (TreeEntry, bool) {
	d, name := path.Split(p)
	for _, e := range trees[strings.TrimSuffix(d, "/")] {
		if e.name == name {
			return e.TreeEntry, true
		}
	}
	return TreeEntry{}, false
}

// statusHead is the "# branch.oid" of `git status --porcelain=v2 --branch`
// ("" on an unborn branch).
func statusHead(out []byte) string {
	for _, f := range strings.Split(string(out), "\x00") {
		if oid, ok := strings.CutPrefix(f, "# branch.oid "); ok {
			if oid == "(initial)" {
				return ""
			}
			return oid
		}
	}
	return ""
}
