package gitcore

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// SnapshotRequest says what a snapshot tree of a worktree's uncommitted state
// holds.
type SnapshotRequest struct {
	// IncludeUntracked adds untracked (not ignored) files, like `add -A`;
	// otherwise only tracked files are updated, like `add -u`.
	IncludeUntracked bool
	// Denylist holds glob patterns of untracked files that must never enter
	// a snapshot (see Denied). Only checked when IncludeUntracked is
	// set.
	Denylist []string
	// Exclude lists paths (files or directories, relative to the root) that
	// are never staged, e.g. ".agency".
	Exclude []string
	// LeaveOut (gitignore syntax) and MaxUntrackedSize (bytes; 0 for no
	// limit) name untracked files that are left out of the snapshot
	// without failing it: they are never hashed, and Snapshot.LeftOut
	// lists them. Tracked files are never left out.
	LeaveOut         *IgnoreMatcher
	MaxUntrackedSize int64
	// Kept, when set, keeps this snapshot's index for the next snapshot
	// (see KeptIndex) instead of removing it.
	Kept *KeptIndex
	// Changed, with a Kept index from an earlier snapshot, lists the paths
	// (relative to the root) that changed since; nil means unknown. The
	// snapshot then looks at those paths alone, or at everything when it
	// cannot be sure that is enough.
	Changed []string
}

// Snapshot is the result of Tree.SnapshotTree.
type Snapshot struct {
	// Head is the commit HEAD pointed at ("" on an unborn branch).
	Head string
	// HeadTree is HEAD's tree ("" on an unborn branch).
	HeadTree string
	// Tree is the snapshot tree id; "" when Denied is not empty.
	Tree string
	// Denied lists untracked files that match the denylist. When it is not
	// empty nothing was staged, no object was written, and only Head is
	// set besides (HeadTree may be "").
	Denied []string
	// Nested lists untracked directories that are git repositories of
	// their own. They are never staged: a gitlink would point at a commit
	// that exists only inside that directory. Callers that would delete
	// the directory must refuse.
	Nested []string
	// LeftOut lists untracked files left out by LeaveOut or
	// MaxUntrackedSize.
	LeftOut []string
	// Incremental: only the Changed paths were looked at.
	Incremental bool
}

// SnapshotTree writes a tree object of the worktree's current state (HEAD,
// the index, and every change in the files) without touching its index,
// HEAD or files. The worktree's index is copied to a temporary index; one
// `git status --porcelain=v2 -z` on the copy (untracked files listed one by
// one with IncludeUntracked, not at all otherwise) names every changed and
// untracked path; untracked ones are checked against the denylist; then
// exactly those paths are staged into the copy (`git update-index --add
// --remove`) and `git write-tree` writes it. The result is what `git add -A`
// (or `-u`) would stage, for the cost of about one `git status`. Excluded
// paths the index holds (an agent's `git add -f .agency/…`, or a HEAD that
// has them) are taken out of the copy; only then does that cost a pass.
//
// Without a Kept index and with an index of plain entries, the status runs
// on the worktree's own index and what it lists is spliced into HEAD's
// tree instead (snapshotSpliced, snapshot_tree.go): the same tree without
// copying, staging and writing the whole index.
//
// With a valid Kept index and the Changed paths, the status looks at those
// paths alone and they are staged into the kept index, or, when they are
// all tracked files, spliced into the last snapshot's tree with no status
// (see KeptIndex).
//
// On a denylist hit nothing is staged and Snapshot.Denied names the files.
// Since only listed, checked paths are ever staged, a file that appears
// after the check can never be hashed into the object store. Tracked files
// that match the denylist are snapshotted like any other tracked file
// (their content is already in the repository's history).
func (t *Tree) SnapshotTree(ctx context.Context, req SnapshotRequest) (*Snapshot, error) {
	if k := req.Kept; k != nil && k.ok && req.Changed != nil {
		snap, ok, err := t.snapshotChanged(ctx, req, k)
		if ok || err != nil {
			return snap, err
		}
	}

	if req.Kept == nil {
		if spliced, ok, err := t.snapshotSpliced(ctx, req); ok || err != nil {
			return spliced, err
		}
	}

	index, snap, dropExcluded, err := t.snapshotStart(ctx, req.Exclude)
	if err != nil {
		return nil, err
	}

	indexStamp := stampOf(index)
	var tmp string
	if k := req.Kept; k != nil {
		k.ok = false
		if tmp, err = k.refresh(index); err != nil {
			return nil, err
		}
	} else {
		if tmp, err = copyIndex(index, ""); err != nil {
			return nil, err
		}
		defer os.Remove(tmp)
	}

	env := []string{"GIT_INDEX_FILE=" + tmp}
	out, err := t.exec(ctx, append(env, "GIT_OPTIONAL_LOCKS=0"), nil, snapshotStatusArgs(req)...)
	if err != nil {
		return nil, err
	}

	entries, err := parseStatusV2(out)
	if err != nil {
		return nil, err
	}

	list, staged, listedExcluded := snapshotPaths(req, entries, snap, t)

	if len(snap.Denied) > 0 {
		return snap, nil
	}

	if dropExcluded || listedExcluded {
		args := []string{"rm", "--cached", "-r", "-q", "--ignore-unmatch", "--"}
		for _, e := range req.Exclude {
			args = append(args, ":(literal)"+strings.Trim(e, "/"))
		}
		if _, err := t.runEnv(ctx, env, nil, privateIndex(args...)...); err != nil {
			return nil, err
		}
	}

	if len(list) > 0 {
		var stage []byte
		for _, e := range list {
			stage = append(append(stage, strings.TrimSuffix(e.Path, "/")...), 0)
		}
		if _, err := t.runEnv(ctx, env, stage, privateIndex("update-index", "--add", "--remove", "-z", "--stdin")...); err != nil {
			return nil, err
		}
	}

	out, err = t.runEnv(ctx, env, nil, privateIndex("write-tree")...)
	if err != nil {
		return nil, err
	}

	snap.Tree = strings.TrimSpace(string(out))
	if k := req.Kept; k != nil {
		k.derived(index, indexStamp, snap, staged)
	}

	return snap, nil
}

// snapshotStatusArgs is the full snapshot's status: every changed path,
// and every untracked file one by one when they are included. Submodules
// are looked at as snapshotSubmodules says.
func snapshotStatusArgs(req SnapshotRequest) []string {
	untracked := "--untracked-files=no"
	if req.IncludeUntracked {
		untracked = "--untracked-files=all"
	}
	return []string{"status", "--porcelain=v2", "-z", "--no-renames", untracked, snapshotSubmodules}
}

// snapshotSubmodules is how every status that asks what a snapshot would
// hold looks at submodules: a submodule counts when the commit checked out
// in it differs from its gitlink (the snapshot records that commit), never
// for the changed or untracked files inside it, which no snapshot of the
// superproject can hold (see Tree.DirtySubmodules). Given explicitly:
// diff.ignoreSubmodules, submodule.<name>.ignore and .gitmodules' ignore=
// would otherwise hide a new submodule commit from checkpoints and land.
const snapshotSubmodules = "--ignore-submodules=dirty"

// snapshotPaths decides, from a full status, which entries a snapshot
// stages (in order), filling snap's Denied, Nested and LeftOut. staged
// holds the untracked files among them; listedExcluded says the index
// holds an excluded path that must come out.
func snapshotPaths(req SnapshotRequest, entries []StatusEntry, snap *Snapshot, t *Tree) ([]StatusEntry, map[string]bool, bool) {
	var list []StatusEntry
	staged := map[string]bool{}
	listedExcluded := false
	for _, e := range entries {
		p := strings.TrimSuffix(e.Path, "/")

		if e.Kind == StatusIgnored {
			continue
		}

		if excluded(p, req.Exclude) {
			if e.Kind != StatusUntracked {
				listedExcluded = true
			}
			continue
		}

		if e.NotInHead && Denied(p, req.Denylist) {
			// Staged (or intent-to-add) but never committed: its current
			// content is as secret as an untracked file's, and staging it
			// here would hash it. Checked whatever IncludeUntracked says.
			snap.Denied = append(snap.Denied, p)
			continue
		}

		if e.Kind == StatusUntracked {
			if !req.IncludeUntracked {
				continue
			}

			if strings.HasSuffix(e.Path, "/") {
				// With --untracked-files=all only a nested repository is
				// listed as a directory.
				snap.Nested = append(snap.Nested, p)
				continue
			}

			if t.LeavesOut(req, p) {
				snap.LeftOut = append(snap.LeftOut, p)
				continue
			}

			if Denied(p, req.Denylist) {
				snap.Denied = append(snap.Denied, p)
				continue
			}

			staged[p] = true
		}

		list = append(list, e)
	}

	return list, staged, listedExcluded
}

// snapshotSpliced is the full snapshot without a kept index to keep: the
// status runs on the worktree's own index (nothing is copied), and the
// paths it lists are spliced into HEAD's tree (snapshot_tree.go) instead
// of staged into a copy of the whole index. Every path the status does
// not list is in the index as in HEAD, so the result is the tree the
// copy would write. It applies when the index is plain (and unchanged
// while the status reads it), has no gitlink, HEAD is born, unmoved
// between the status and the reading of its trees and has no excluded
// path, and at most maxChanged paths are listed; ok is false otherwise,
// or when a step fails, and the caller takes the index path. A result
// with Denied is final.
func (t *Tree) snapshotSpliced(ctx context.Context, req SnapshotRequest) (*Snapshot, bool, error) {
	batch := t.startTreeReader(ctx)
	defer batch.abandon()
	index, head, entries, ok, err := t.splicedStatus(ctx, req)
	if !ok || err != nil {
		return nil, false, err
	}

	snap := &Snapshot{Head: head}
	list, _, listedExcluded := snapshotPaths(req, entries, snap, t)
	if len(snap.Denied) > 0 {
		return snap, true, nil
	}
	if listedExcluded || len(list) > maxChanged {
		return nil, false, nil
	}

	changes, old, rehash, ok := splicePlan(list)
	if !ok {
		return nil, false, nil
	}

	// HEAD's trees along the listed paths (and at the excluded paths,
	// which HEAD must not have) are read while the files are staged.
	treesCh := make(chan *baseTrees, 1)
	go func() { treesCh <- t.headTreesFor(ctx, head, list, req.Exclude, batch) }()
	var staged map[string]*TreeEntry
	if len(rehash) > 0 {
		staged, err = t.stageFew(ctx, filepath.Dir(index), old, rehash, len(head)/2)
	}

	bt := <-treesCh
	if err != nil || bt == nil {
		return nil, false, nil
	}

	snap.HeadTree = bt.root

	if !onlyFiles(staged) {
		return nil, false, nil
	}
	for p, e := range staged {
		changes[p] = e
	}

	if len(changes) == 0 {
		snap.Tree = snap.HeadTree
		return snap, true, nil
	}

	root, err := t.spliceTrees(ctx, bt.trees, changes, len(head)/2)
	if err != nil {
		return nil, false, nil
	}

	snap.Tree = root
	return snap, true, nil
}

// splicedStatus runs snapshotSpliced's status on the worktree's own
// index; ok is false unless HEAD is born and the index plain, without a
// gitlink and unchanged while the status read it.
func (t *Tree) splicedStatus(ctx context.Context, req SnapshotRequest) (string, string, []StatusEntry, bool, error) {
	index, err := t.indexPath(ctx)
	if err != nil {
		return "", "", nil, false, err
	}

	before := stampOf(index)
	out, err := t.exec(ctx, []string{"GIT_OPTIONAL_LOCKS=0"}, nil, append(snapshotStatusArgs(req), "--branch")...)
	if err != nil {
		return "", "", nil, false, err
	}

	head := statusHead(out)
	if head == "" || before == (stamp{}) {
		return "", "", nil, false, nil
	}
	if plain, links := indexPlain(index, len(head)/2); !plain || links || stampOf(index) != before {
		return "", "", nil, false, nil
	}

	entries, err := parseStatusV2(out)
	return index, head, entries, err == nil, err
}

// splicePlan sorts a full snapshot's listed entries: those whose file is
// as the index has it take the index entry (changes); the others are
// staged again from their files (rehash), from their index entry (old)
// when there is one. ok is false for an entry a plain index cannot hold
// (a submodule, a rename, a conflict).
func splicePlan(list []StatusEntry) (changes map[string]*TreeEntry, old map[string]TreeEntry, rehash []string, ok bool) {
	changes, old = map[string]*TreeEntry{}, map[string]TreeEntry{}
	seen := map[string]bool{}
	for _, e := range list {
		p := e.Path
		switch {
		case e.Kind == StatusChanged && (e.Sub != "N..." || e.IndexMode == "160000"):
			return nil, nil, nil, false
		case e.Kind == StatusChanged && e.XY[1] == '.' && e.IndexMode != "000000":
			// Staging it into the copy would leave its entry as it is.
			changes[p] = &TreeEntry{Mode: treeMode(e.IndexMode), OID: e.IndexOID}
			continue
		case e.Kind == StatusChanged && e.IndexMode != "000000":
			old[p] = TreeEntry{Mode: treeMode(e.IndexMode), OID: e.IndexOID}
		case e.Kind != StatusChanged && e.Kind != StatusUntracked:
			return nil, nil, nil, false
		}

		if !seen[p] { // deleted from the index and untracked: listed twice
			seen[p] = true
			rehash = append(rehash, p)
		}
	}

	return changes, old, rehash, true
}

// treeMode is an index or ls-files mode as a tree writes it.
func treeMode(m string) string {
	if m == "040000" {
		return "40000"
	}
	return m
}

// LeavesOut reports whether an untracked file (relative to the root) is
// left out of a snapshot by the request's LeaveOut patterns or size limit.
func (t *Tree) LeavesOut(req SnapshotRequest, p string) bool {
	if req.LeaveOut.match(p, false) {
		return true
	}
	if req.MaxUntrackedSize > 0 {
		if fi, err := os.Lstat(filepath.Join(t.Path, filepath.FromSlash(p))); err == nil && fi.Size() > req.MaxUntrackedSize {
			return true
		}
	}
	return false
}

// snapshotStart returns the worktree's index path (read from its `.git`
// file or directory; a `rev-parse --git-path` only when neither says),
// HEAD, HEAD's tree and whether HEAD's tree has any of the excluded paths,
// all from one `git cat-file --batch-check` (no index is read).
func (t *Tree) snapshotStart(ctx context.Context, exclude []string) (string, *Snapshot, bool, error) {
	snap := &Snapshot{}
	var in strings.Builder
	in.WriteString("HEAD^{commit}\nHEAD^{tree}\n")
	for _, p := range exclude {
		in.WriteString("HEAD:" + strings.Trim(p, "/") + "\n")
	}

	out, err := t.exec(ctx, []string{"GIT_OPTIONAL_LOCKS=0"}, []byte(in.String()), "cat-file", "--batch-check=%(objectname) %(objecttype)")
	if err != nil {
		return "", nil, false, err
	}

	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	found := func(i int) (string, bool) {
		if i >= len(lines) {
			return "", false
		}
		obj, kind, ok := strings.Cut(lines[i], " ")
		return obj, ok && kind != "missing" && kind != "ambiguous"
	}
	dropExcluded := false
	if head, ok := found(0); ok {
		snap.Head = head
		snap.HeadTree, _ = found(1)
		for i := range exclude {
			if _, ok := found(2 + i); ok {
				dropExcluded = true
			}
		}
	}

	index, err := t.indexPath(ctx)
	if err != nil {
		return "", nil, false, err
	}

	return index, snap, dropExcluded, nil
}

// indexPath is the worktree's index file: <gitdir>/index, the git
// directory named by its `.git` file (a linked worktree) or being its
// `.git` directory; `git rev-parse --git-path index` otherwise.
func (t *Tree) indexPath(ctx context.Context) (string, error) {
	dotGit := filepath.Join(t.Path, ".git")
	if fi, err := os.Lstat(dotGit); err == nil && fi.IsDir() {
		return filepath.Join(dotGit, "index"), nil
	} else if err == nil && fi.Mode().IsRegular() {
		if data, err := os.ReadFile(dotGit); err == nil {
			if dir, ok := strings.CutPrefix(strings.TrimSpace(string(data)), "gitdir: "); ok {
				if !filepath.IsAbs(dir) {
					dir = filepath.Join(t.Path, dir)
				}
				return filepath.Join(dir, "index"), nil
			}
		}
	}

	out, err := t.query(ctx, "rev-parse", "--git-path", "index")
	if err != nil {
		return "", err
	}

	index := strings.TrimRight(string(out), "\n")
	if !filepath.IsAbs(index) {
		index = filepath.Join(t.Path, index)
	}

	return index, nil
}

func excluded(path string, excl []string) bool {
	for _, e := range excl {
		e = strings.Trim(e, "/")
		if path == e || strings.HasPrefix(path, e+"/") {
			return true
		}
	}
	return false
}

// copyIndex copies an index file to a new file next to it (the git
// directory: same filesystem, and split-index files stay findable) and
// returns its path; to dst instead when dst is not "". Without an index,
// the path of a not-yet-existing file is returned (git starts from an
// empty index). The copy keeps the index's mtime: git's racy-git check
// compares it with each entry's, and a copy stamped "now" would make a
// same-size edit written in the same second as the index (an agent's first
// edit right after checkout) look clean.
func copyIndex(index, dst string) (string, error) {
	var f *os.File
	var err error
	if dst != "" {
		f, err = os.Create(dst)
	} else {
		f, err = os.CreateTemp(filepath.Dir(index), SnapshotIndexPrefix+strconv.Itoa(os.Getpid())+"-*")
	}

	if err != nil {
		return "", err
	}

	name := f.Name()
	src, err := os.Open(index)
	if err != nil {
		f.Close()
		os.Remove(name)
		if os.IsNotExist(err) {
			return name, nil
		}
		return "", err
	}
	defer src.Close()

	if _, err := io.Copy(f, src); err != nil {
		f.Close()
		os.Remove(name)
		return "", err
	}

	if err := f.Close(); err != nil {
		os.Remove(name)
		return "", err
	}

	fi, err := src.Stat()
	if err == nil {
		err = os.Chtimes(name, fi.ModTime(), fi.ModTime())
	}

	if err != nil {
		os.Remove(name)
		return "", err
	}

	return name, nil
}

// SnapshotIndexPrefix names the temp index files SnapshotTree makes next to
// a worktree's index: SnapshotIndexPrefix + "<pid>-<random>", the pid being
// the writer's, so a crash's leftover is known at once.
const SnapshotIndexPrefix = "agency-snapshot-index-"

// SnapshotIndexDirs lists where SnapshotTree makes its temp index files:
// the common git directory and every linked worktree's admin directory
// (.git/worktrees/<x>/). A process killed during a snapshot leaves them
// there, named SnapshotIndexPrefix*.
func (r *Repo) SnapshotIndexDirs() []string {
	dirs := []string{r.CommonDir}
	if ents, err := os.ReadDir(filepath.Join(r.CommonDir, "worktrees")); err == nil {
		for _, e := range ents {
			if e.IsDir() {
				dirs = append(dirs, filepath.Join(r.CommonDir, "worktrees", e.Name()))
			}
		}
	}
	return dirs
}
