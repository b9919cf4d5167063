package gitcore

import (
	"encoding/binary"
	"path/filepath"
)

// MayHoldGitlinks reports whether the tree's index may hold a gitlink: a
// submodule, with or without a .gitmodules (a repository embedded by
// `git add`). False only when the index file, read with no git call, is
// proven to hold none; any doubt (a split index, another version, a HEAD
// it cannot read from files) says it may.
func (t *Tree) MayHoldGitlinks() bool {
	gitDir, ok := worktreeGitDir(t.Path)
	if !ok {
		return true
	}
	oidLen := len(t.headCommit(gitDir)) / 2
	if oidLen != 20 && oidLen != 32 {
		return true
	}
	links, ok := indexGitlinks(filepath.Join(gitDir, "index"), oidLen)
	return links || !ok
}

// indexGitlinks reports whether the index file at p holds a gitlink; ok is
// false when it could not tell (a read error, another version, a split
// index, whose entries live elsewhere). Flags (skip-worktree, sparse
// directories, conflict stages) do not matter: only the modes are read.
func indexGitlinks(p string, oidLen int) (links, ok bool) {
	f, r, size, version, count, ok := openIndexStream(p)
	if !ok {
		return false, false
	}
	defer f.Close()
	entry := make([]byte, 42+oidLen)
	for i := count; i > 0; i-- {
		link, ok := r.entryLink(entry, version)
		if !ok {
			return false, false
		}
		links = links || link
	}
	return links, r.extensionsPlain(size, oidLen)
}

// entryLink reads one entry (buf: room for its fixed part and flags) and
// tells whether it is a gitlink; ok is false on a read error.
func (r *indexReader) entryLink(buf []byte, version uint32) (link, ok bool) {
	start := r.off
	if !r.read(buf) {
		return false, false
	}
	fixed := len(buf) - 2
	link = binary.BigEndian.Uint32(buf[24:28])&0o170000 == 0o160000
	if flags := binary.BigEndian.Uint16(buf[fixed:]); flags&0x4000 != 0 {
		var ext [2]byte // extended flags (version 3 and later)
		if version < 3 || !r.read(ext[:]) {
			return false, false
		}
	}
	if version == 4 {
		if !r.pastVarint() {
			return false, false
		}
		return link, r.pastNUL()
	}
	if !r.pastNUL() {
		return false, false
	}
	size := r.off - 1 - start
	return link, r.discard(start + (size+8)&^7 - r.off)
}
