package gitcore

import (
	"bytes"
	"context"
	"encoding/hex"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/git-agency/git-agency/gitcore/internal/index"
	"github.com/git-agency/git-agency/gitcore/internal/repofiles"
)

// TrackedUnchanged reports whether the tree is proven to hold no staged and
// no unstaged change to a tracked file, without a `git status`: true only
// when HEAD is head (whose tree is headTree), the index's cache tree says
// the index is exactly headTree, and every entry git would look at has the
// file status of the index (git's own test, stat data first, then the
// content of those whose stat data differs or that are racily clean,
// hashed by `git hash-object` with the tree's filters). False means "not
// proven": ask HasTrackedChanges. It reads the index file and lstats its
// entries in parallel: in a large tree that is a fraction of a status,
// which also diffs the index against HEAD's trees.
//
// Anything it does not follow exactly as git does (a split index, an
// unknown required extension, a conflict, an intent-to-add entry, a
// submodule, a file whose type or mode differs, a missing file, a leading
// directory that is not a real directory (a symlink), many files to hash,
// a HEAD it cannot read from files) is "not proven".
func (t *Tree) TrackedUnchanged(ctx context.Context, head, headTree string) bool {
	oidLen := len(headTree) / 2
	if head == "" || (oidLen != 20 && oidLen != 32) {
		return false
	}

	gitDir, ok := repofiles.WorktreeGitDir(t.Path)
	if !ok || t.headCommit(gitDir) != head {
		return false
	}

	f, ok := index.Map(filepath.Join(gitDir, "index"))
	if !ok {
		return false
	}
	defer f.Close() // the entries' ids are slices of its data
	idx, ok := parseIndexStat(f.Data, oidLen)
	if !ok || hex.EncodeToString(idx.cacheTree) != headTree {
		return false
	}

	doubt, ok := t.statEntries(idx.entries, racyRuleFor(gitDir, f))
	if !ok {
		return false
	}
	if len(doubt) == 0 {
		return true
	}

	proof := beginRacyProof(gitDir, f.Stamp)

	if !idx.attributes {
		doubt = t.settleAsIs(gitDir, oidLen, doubt)
	}

	same := t.sameContent(ctx, doubt)
	proof.end(same)
	return same
}

// maxHashed bounds how many files TrackedUnchanged hashes; past it a
// status is as cheap.
const maxHashed = 64

// indexStat is what TrackedUnchanged reads of an index: the entries git
// looks at in the tree and the cache tree's root.
type indexStat struct {
	entries   []statEntry
	cacheTree []byte // nil when the root is invalid or absent
	// attributes: the index has a .gitattributes file (in any directory,
	// in the tree or not).
	attributes bool
}

// statEntry is one index entry's path, id (raw, in the index file's
// bytes), mode and stat data.
type statEntry struct {
	path                       string
	oid                        []byte
	mode                       uint32
	ctime, ctimeN, mtime, mtim uint32
	ino, uid, gid, size        uint32
}

// parseIndexStat reads an index file (versions 2 to 4). Entries marked
// skip-worktree (sparse checkout, sparse directories) or assume-unchanged
// are left out, as git's status leaves them; ok is false for a conflict,
// an intent-to-add entry, a gitlink, a split index or a required extension
// it does not know.
func parseIndexStat(data []byte, oidLen int) (indexStat, bool) {
	var out indexStat
	it, ok := index.Entries(data, oidLen)
	if !ok {
		return out, false
	}

	out.entries = make([]statEntry, 0, min(it.Count(), uint32(len(data)/62)))
	for it.Next() {
		e := it.Entry()
		name := e.Path
		if bytes.HasSuffix(name, []byte(".gitattributes")) && (len(name) == 14 || name[len(name)-15] == '/') {
			out.attributes = true
		}

		keep, ok := entryLooked(e)
		if !ok {
			return out, false
		}

		if keep {
			out.entries = append(out.entries, statEntry{path: string(name), oid: e.OID, mode: e.Mode,
				ctime: e.CtimeSec, ctimeN: e.CtimeNsec, mtime: e.MtimeSec, mtim: e.MtimeNsec,
				ino: e.Ino, uid: e.UID, gid: e.GID, size: e.Size})
		}
	}

	exts, ok := it.Extensions()
	for _, x := range exts {
		switch {
		case x.Sig == "TREE":
			out.cacheTree = cacheTreeRoot(x.Body, oidLen)
		case x.Sig == "sdir":
			// sparse directories: skip-worktree entries, left out above
		case x.Required():
			return out, false // a split index's "link", …
		}
	}

	return out, ok
}

// entryLooked says, from an entry's mode and flags, whether git's status
// looks at its file (keep), and ok false when git would report it whatever
// the file holds or TrackedUnchanged does not follow it.
func entryLooked(e *index.Entry) (keep, ok bool) {
	switch {
	case e.Stage() != 0 || e.IntentToAdd():
		return false, false // a conflict stage, or git add -N
	case e.SkipWorktree() || e.AssumeValid():
		return false, true // not in the tree, or assume-unchanged
	case e.Gitlink() || e.SparseDir():
		return false, false // a submodule, or a sparse directory not marked
	}
	return true, true
}

// cacheTreeRoot is the root tree id of a cache tree extension, nil when
// the root is invalid (the index changed since a tree was written from it).
func cacheTreeRoot(b []byte, oidLen int) []byte {
	if len(b) == 0 || b[0] != 0 {
		return nil
	}

	nl := bytes.IndexByte(b, '\n')
	if nl < 0 {
		return nil
	}

	count, _, _ := strings.Cut(string(b[1:nl]), " ")
	if n, err := strconv.Atoi(count); err != nil || n < 0 || nl+1+oidLen > len(b) {
		return nil
	}

	return b[nl+1 : nl+1+oidLen]
}

// statEntries lstats every entry, several at once, and returns those whose
// content must be compared (stat data differs, or racily clean: racyRule);
// ok is false when a file
// is missing or its type or executable bit differs from the entry's.
func (t *Tree) statEntries(entries []statEntry, racy racyRule) ([]statEntry, bool) {
	const workers = 8
	var (
		mu    sync.Mutex
		doubt []statEntry
		bad   bool
		wg    sync.WaitGroup
	)
	per := (len(entries) + workers - 1) / workers
	for w := 0; w < workers && w*per < len(entries); w++ {
		part := entries[w*per : min((w+1)*per, len(entries))]
		wg.Add(1)
		go func() {
			defer wg.Done()
			mine, ok := t.statPart(part, racy)
			mu.Lock()
			bad = bad || !ok
			doubt = append(doubt, mine...)
			mu.Unlock()
		}()
	}

	wg.Wait()
	return doubt, !bad && len(doubt) <= maxHashed
}

// statPart is one worker's share of statEntries: the entries of part
// whose content must be compared; ok false as for statEntries. Each
// directory's files are lstat'ed in it (entryStatter), once its path is
// known to be real directories (leadingDirs).
func (t *Tree) statPart(part []statEntry, racy racyRule) ([]statEntry, bool) {
	var mine []statEntry
	dirs := leadingDirs{root: t.Path, real: map[string]bool{}}
	st := newEntryStatter(t.Path)
	defer st.close()
	for _, e := range part {
		dir, name := path.Split(e.path)
		dir = strings.TrimSuffix(dir, "/")
		if dir == "" {
			dir = "."
		}
		if !dirs.allReal(dir) {
			return nil, false
		}

		same, ok := st.match(dir, name, e)
		if !ok {
			return nil, false
		}
		if !same || racy.racy(&e) {
			mine = append(mine, e)
		}
	}

	return mine, true
}

// leadingDirs checks the directories leading to entries as git's status
// does (has_symlink_leading_path): an lstat of each, which must be a real
// directory. The lstat of a file follows a symlink in a leading directory,
// so a directory replaced by a symlink to a copy of it would otherwise
// look unchanged where git finds every file under it deleted. One per
// worker (no lock); real remembers each directory's answer, so each is
// lstatted once per worker.
type leadingDirs struct {
	root string
	real map[string]bool
}

// allReal reports whether dir (slash-separated, relative to the root; "."
// for the root itself) and every directory above it are real directories.
func (d leadingDirs) allReal(dir string) bool {
	if dir == "." {
		return true
	}
	if v, seen := d.real[dir]; seen {
		return v
	}

	v := d.allReal(path.Dir(dir))
	if v {
		fi, err := os.Lstat(filepath.Join(d.root, filepath.FromSlash(dir)))
		v = err == nil && fi.IsDir()
	}

	d.real[dir] = v
	return v
}

// sameContent hashes the files of entries as git would stage them
// (`git hash-object --stdin-paths`: the tree's attributes and filters) and
// reports whether each one's id is its entry's.
func (t *Tree) sameContent(ctx context.Context, entries []statEntry) bool {
	if len(entries) == 0 {
		return true
	}

	var in strings.Builder
	for _, e := range entries {
		if strings.ContainsAny(e.path, "\n\"") {
			return false
		}
		in.WriteString(e.path + "\n")
	}

	out, err := t.exec(ctx, []string{"GIT_OPTIONAL_LOCKS=0"}, []byte(in.String()), "hash-object", "--stdin-paths")
	if err != nil {
		return false
	}

	ids := strings.Fields(string(out))
	if len(ids) != len(entries) {
		return false
	}

	for i, e := range entries {
		if ids[i] != hex.EncodeToString(e.oid) {
			return false
		}
	}

	return true
}
