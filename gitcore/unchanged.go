package gitcore

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/hex"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
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
	gitDir, ok := worktreeGitDir(t.Path)
	if !ok || t.headCommit(gitDir) != head {
		return false
	}
	data, racy, release, ok := mapIndex(filepath.Join(gitDir, "index"))
	if !ok {
		return false
	}
	defer release() // the entries' ids are slices of data
	idx, ok := parseIndexStat(data, oidLen)
	if !ok || hex.EncodeToString(idx.cacheTree) != headTree {
		return false
	}
	doubt, ok := t.statEntries(idx.entries, racy)
	if !ok {
		return false
	}
	if !idx.attributes {
		doubt = t.settleAsIs(gitDir, oidLen, doubt)
	}
	return t.sameContent(ctx, doubt)
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
	if len(data) < 12+oidLen || string(data[:4]) != "DIRC" {
		return out, false
	}
	version := binary.BigEndian.Uint32(data[4:8])
	if version < 2 || version > 4 {
		return out, false
	}
	end := len(data) - oidLen
	off, ok := out.readEntries(data[:end], version, oidLen)
	if !ok {
		return out, false
	}
	for off+8 <= end {
		sig := string(data[off : off+4])
		size := int(binary.BigEndian.Uint32(data[off+4 : off+8]))
		body := off + 8
		if size < 0 || body+size > end {
			return out, false
		}
		switch {
		case sig == "TREE":
			out.cacheTree = cacheTreeRoot(data[body:body+size], oidLen)
		case sig == "sdir":
			// sparse directories: skip-worktree entries, left out above
		case sig[0] < 'A' || sig[0] > 'Z':
			return out, false // required (a split index's "link", …)
		}
		off = body + size
	}
	return out, off == end
}

// readEntries reads the entries of data (an index without its trailing
// checksum) into out, and returns where they end.
func (out *indexStat) readEntries(data []byte, version uint32, oidLen int) (int, bool) {
	off, prev := 12, []byte(nil)
	for n := binary.BigEndian.Uint32(data[8:12]); n > 0; n-- {
		e, next, name, keep, ok := indexEntryStat(data, off, version, oidLen, prev)
		if !ok {
			return 0, false
		}
		off, prev = next, name
		if bytes.HasSuffix(name, []byte(".gitattributes")) && (len(name) == 14 || name[len(name)-15] == '/') {
			out.attributes = true
		}
		if keep {
			e.path = string(name)
			out.entries = append(out.entries, e)
		}
	}
	return off, true
}

// indexEntryStat decodes the entry at off (prev: the path before it, for
// version 4's prefix compression, a buffer it may reuse) and returns it
// without its path, where the next entry begins, and its path. keep: git's
// status looks at its file. Nothing is copied for an entry it leaves out.
func indexEntryStat(data []byte, off int, version uint32, oidLen int, prev []byte) (e statEntry, next int, name []byte, keep, ok bool) {
	start, fixed := off, 40+oidLen
	if off+fixed+2 > len(data) {
		return e, 0, nil, false, false
	}
	u := func(i int) uint32 { return binary.BigEndian.Uint32(data[off+i : off+i+4]) }
	e = statEntry{ctime: u(0), ctimeN: u(4), mtime: u(8), mtim: u(12), ino: u(20), mode: u(24), uid: u(28), gid: u(32), size: u(36)}
	e.oid = data[off+40 : off+fixed]
	flags := binary.BigEndian.Uint16(data[off+fixed : off+fixed+2])
	off += fixed + 2
	var ext uint16
	if flags&0x4000 != 0 {
		if version < 3 || off+2 > len(data) {
			return e, 0, nil, false, false
		}
		ext = binary.BigEndian.Uint16(data[off : off+2])
		off += 2
	}
	name, next, ok = indexEntryPath(data, start, off, version, prev, int(flags&0xfff))
	if !ok {
		return e, 0, nil, false, false
	}
	keep, ok = entryLooked(e.mode, flags, ext)
	return e, next, name, keep, ok
}

// indexEntryPath decodes the path of the entry that began at start, whose
// path (or version 4's prefix length) is at off, and where the next entry
// begins. Versions 2 and 3 give a slice of data; version 4 builds the
// path in prev's buffer. size is the path's length as the entry's flags
// give it (0xfff: that long or longer); versions 2 and 3 take it, as git
// does, when a NUL byte ends it there, sparing the search for the NUL.
func indexEntryPath(data []byte, start, off int, version uint32, prev []byte, size int) ([]byte, int, bool) {
	strip := 0
	if version == 4 {
		v, n := indexVarint(data[off:])
		if n == 0 || v > uint64(len(prev)) {
			return nil, 0, false
		}
		strip, off = int(v), off+n
	} else if size < 0xfff && off+size < len(data) && data[off+size] == 0 {
		return data[off : off+size], start + (off+size-start+8)&^7, true
	}
	nul := bytes.IndexByte(data[off:], 0)
	if nul < 0 {
		return nil, 0, false
	}
	if version == 4 {
		return append(prev[:len(prev)-strip], data[off:off+nul]...), off + nul + 1, true
	}
	return data[off : off+nul], start + (off+nul-start+8)&^7, true
}

// entryLooked says, from an entry's mode and flags, whether git's status
// looks at its file (keep), and ok false when git would report it whatever
// the file holds or TrackedUnchanged does not follow it.
func entryLooked(mode uint32, flags, ext uint16) (keep, ok bool) {
	skipWorktree, intentToAdd := ext&0x4000 != 0, ext&0x2000 != 0
	switch {
	case flags&0x3000 != 0 || intentToAdd:
		return false, false // a conflict stage, or git add -N
	case skipWorktree || flags&0x8000 != 0:
		return false, true // not in the tree, or assume-unchanged
	case mode&0o170000 == 0o160000 || mode&0o170000 == 0o040000:
		return false, false // a submodule, or a sparse directory not marked
	}
	return true, true
}

// indexVarint is version 4's offset encoding and its length in bytes (0
// when malformed).
func indexVarint(b []byte) (uint64, int) {
	if len(b) == 0 {
		return 0, 0
	}
	v, i := uint64(b[0]&0x7f), 0
	for b[i]&0x80 != 0 {
		i++
		if i >= len(b) || i > 8 {
			return 0, 0
		}
		v = ((v + 1) << 7) | uint64(b[i]&0x7f)
	}
	return v, i + 1
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
// content must be compared (stat data differs, or racily clean: modified
// in the second the index was written or later); ok is false when a file
// is missing or its type or executable bit differs from the entry's.
func (t *Tree) statEntries(entries []statEntry, racy uint32) ([]statEntry, bool) {
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
func (t *Tree) statPart(part []statEntry, racy uint32) ([]statEntry, bool) {
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
		if !same || e.mtime >= racy {
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
