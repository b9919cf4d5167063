// Package index reads git's index file (.git/index): versions 2, 3 and 4,
// with SHA-1 or SHA-256 object ids. It is the one decoder of the format in
// git-agency; every reader of an index (gitcore's TrackedUnchanged, the
// snapshots' plain and gitlink checks, the small private index of a
// spliced snapshot) iterates its entries here.
//
// It reads what git wrote, and refuses (ok false) anything git would read
// differently or not at all, rather than guess: a short or malformed file,
// another version, a path whose length field disagrees with its NUL, an
// extended flag git does not know. The trailing checksum is not verified
// (git replaces the file whole, by renaming a lock file over it); the
// fuzz test FuzzIndex compares every file git accepts with
// `git ls-files --stage --debug`.
package index

import (
	"bytes"
	"encoding/binary"
)

// Flag bits of an entry (git's CE_* of the on-disk format).
const (
	flagAssumeValid = 0x8000 // assume-unchanged
	flagExtended    = 0x4000 // an extended flags word follows (version 3+)
	flagStage       = 0x3000
	flagNameLen     = 0x0fff

	extSkipWorktree = 0x4000
	extIntentToAdd  = 0x2000
	extKnown        = extSkipWorktree | extIntentToAdd
)

// Entry is one index entry. Path and OID are slices of the file's bytes or
// of the iterator's buffer: valid until the next call of Next only.
type Entry struct {
	Path []byte
	OID  []byte

	CtimeSec, CtimeNsec uint32
	MtimeSec, MtimeNsec uint32
	Dev, Ino            uint32
	Mode                uint32
	UID, GID, Size      uint32

	// Flags is the on-disk flags word without the path's length;
	// ExtFlags the extended flags (0 without them).
	Flags, ExtFlags uint16
}

// Stage is the entry's merge stage (0: merged).
func (e *Entry) Stage() int { return int(e.Flags&flagStage) >> 12 }

// AssumeValid: marked assume-unchanged (`update-index --assume-unchanged`).
func (e *Entry) AssumeValid() bool { return e.Flags&flagAssumeValid != 0 }

// SkipWorktree: not in the worktree (sparse checkout).
func (e *Entry) SkipWorktree() bool { return e.ExtFlags&extSkipWorktree != 0 }

// IntentToAdd: added with `git add -N`.
func (e *Entry) IntentToAdd() bool { return e.ExtFlags&extIntentToAdd != 0 }

// Gitlink: a submodule's commit.
func (e *Entry) Gitlink() bool { return e.Mode&0o170000 == 0o160000 }

// SparseDir: a sparse index's directory entry.
func (e *Entry) SparseDir() bool { return e.Mode&0o170000 == 0o040000 }

// Plain: stage 0 and no flag at all (no assume-unchanged, skip-worktree or
// intent-to-add), a file or symlink or gitlink, not a sparse directory.
func (e *Entry) Plain() bool { return e.Flags == 0 && e.ExtFlags == 0 && !e.SparseDir() }

// Header is an index file's header.
type Header struct {
	Version uint32
	Count   uint32
}

// parseHeader reads the header of data (a whole index file).
func parseHeader(data []byte) (Header, bool) {
	if len(data) < 12 || string(data[:4]) != "DIRC" {
		return Header{}, false
	}
	h := Header{Version: binary.BigEndian.Uint32(data[4:8]), Count: binary.BigEndian.Uint32(data[8:12])}
	return h, h.Version >= 2 && h.Version <= 4
}

// Iter walks the entries of an index file held in memory, then its
// extensions.
type Iter struct {
	data    []byte // the file without its trailing checksum
	off     int
	left    uint32
	version uint32
	oidLen  int
	prev    []byte // version 4: the previous path (a buffer of ours)
	e       Entry
	bad     bool
}

// Entries returns an iterator over the entries of data, a whole index file
// whose object ids are oidLen bytes (20 or 32); ok is false when its
// header is not one this package reads.
func Entries(data []byte, oidLen int) (*Iter, bool) {
	h, ok := parseHeader(data)
	if !ok || (oidLen != 20 && oidLen != 32) || len(data) < 12+oidLen {
		return nil, false
	}
	return &Iter{data: data[:len(data)-oidLen], off: 12, left: h.Count, version: h.Version, oidLen: oidLen}, true
}

// Count is the number of entries the header announces.
func (it *Iter) Count() uint32 { return it.left }

// Next decodes the next entry; false at the end or on a malformed one
// (Err tells).
func (it *Iter) Next() bool {
	if it.left == 0 || it.bad {
		return false
	}
	it.left--
	if !it.decode() {
		it.bad = true
		return false
	}
	return true
}

// Entry is the entry Next decoded.
func (it *Iter) Entry() *Entry { return &it.e }

// OK reports that every entry read so far was well formed.
func (it *Iter) OK() bool { return !it.bad }

func (it *Iter) decode() bool {
	data, off := it.data, it.off
	fixed := 40 + it.oidLen
	if off+fixed+2 > len(data) {
		return false
	}

	d := data[off : off+fixed+2]
	u := binary.BigEndian.Uint32
	e := &it.e
	e.CtimeSec, e.CtimeNsec, e.MtimeSec, e.MtimeNsec = u(d[0:]), u(d[4:]), u(d[8:]), u(d[12:])
	e.Dev, e.Ino, e.Mode, e.UID, e.GID, e.Size = u(d[16:]), u(d[20:]), u(d[24:]), u(d[28:]), u(d[32:]), u(d[36:])
	e.OID = d[40:fixed]
	flags := binary.BigEndian.Uint16(d[fixed:])
	e.Flags, e.ExtFlags = flags&^flagNameLen, 0
	name := off + fixed + 2
	if flags&flagExtended != 0 {
		if it.version < 3 || name+2 > len(data) {
			return false
		}

		e.ExtFlags = binary.BigEndian.Uint16(data[name:])
		if e.ExtFlags&^extKnown != 0 {
			return false // git dies: "unknown index entry format"
		}

		name += 2
	}

	if it.version == 4 {
		return it.pathV4(name, int(flags&flagNameLen))
	}

	return it.pathV2(off, name, int(flags&flagNameLen))
}

// pathV2 reads a version 2 or 3 path at name (the entry began at start):
// size bytes, or up to the NUL when the length field is full (0xfff),
// then NUL padding to a multiple of 8.
func (it *Iter) pathV2(start, name, size int) bool {
	data := it.data
	if size == flagNameLen {
		nul := bytes.IndexByte(data[name:], 0)
		if nul < flagNameLen {
			return false
		}
		size = nul
	} else if name+size >= len(data) || data[name+size] != 0 || bytes.IndexByte(data[name:name+size], 0) >= 0 {
		return false
	}

	next := start + (name+size-start+8)&^7
	if next > len(data) {
		return false
	}

	it.e.Path, it.off = data[name:name+size], next
	return true
}

// pathV4 reads a version 4 path at name: a varint (how many bytes of the
// previous path to drop), the rest of the path, a NUL; no padding. size
// is the whole path's length as the flags give it (0xfff: that or more).
func (it *Iter) pathV4(name, size int) bool {
	strip, n := varint(it.data[name:])
	if n == 0 || strip > uint64(len(it.prev)) {
		return false
	}

	name += n
	nul := bytes.IndexByte(it.data[name:], 0)
	if nul < 0 {
		return false
	}

	it.prev = append(it.prev[:len(it.prev)-int(strip)], it.data[name:name+nul]...)
	if (size < flagNameLen && len(it.prev) != size) || (size == flagNameLen && len(it.prev) < size) {
		return false
	}

	it.e.Path, it.off = it.prev, name+nul+1
	return true
}

// varint is version 4's offset encoding and its length in bytes (0 when
// malformed or past what git decodes).
func varint(b []byte) (uint64, int) {
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

// Extension is one extension of the file: its signature and body.
type Extension struct {
	Sig  string
	Body []byte
}

// Required: an extension whose signature starts with a lower-case letter,
// which git refuses to read the index without understanding ("link": a
// split index, "sdir": a sparse index).
func (x Extension) Required() bool { return x.Sig[0] < 'A' || x.Sig[0] > 'Z' }

// Extensions reads the extensions after the entries (call it once Next
// returned false); ok is false when an entry was malformed, or the
// extensions do not end exactly at the trailing checksum.
func (it *Iter) Extensions() ([]Extension, bool) {
	if it.bad || it.left != 0 {
		return nil, false
	}

	var out []Extension
	off, end := it.off, len(it.data)
	for off+8 <= end {
		size := int(binary.BigEndian.Uint32(it.data[off+4 : off+8]))
		body := off + 8
		if size < 0 || size > end-body {
			return nil, false
		}
		out = append(out, Extension{Sig: string(it.data[off : off+4]), Body: it.data[body : body+size]})
		off = body + size
	}

	return out, off == end
}
