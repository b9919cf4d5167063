package gitcore

import (
	"bufio"
	"encoding/binary"
	"errors"
	"io"
	"os"
)

// indexPlain reports whether the index file at p holds only entries that
// staging a path from its file treats alike in any index: stage 0, no
// assume-unchanged, skip-worktree or intent-to-add flag, no sparse
// directory, and is not split; and whether it holds a gitlink
// (submodule). Any doubt (another version, a read error) says not plain.
// oidLen is the object ids' length in bytes.
//
// The file is read as a stream, never whole: at 100k files an index is
// 9 MB, which a supervisor checking it on every full checkpoint would
// otherwise hold, and its heap double for, at each one.
func indexPlain(p string, oidLen int) (plain, gitlinks bool) {
	f, r, size, version, count, ok := openIndexStream(p)
	if !ok {
		return false, false
	}
	defer f.Close()
	entry := make([]byte, 42+oidLen)
	for i := count; i > 0; i-- {
		var link bool
		if plain, link = r.entryPlain(entry, version); !plain {
			return false, false
		}
		gitlinks = gitlinks || link
	}
	return r.extensionsPlain(size, oidLen), gitlinks
}

// openIndexStream opens the index file at p for reading as a stream and
// reads its header: the stream positioned at the first entry, the file's
// size, the index version (2 to 4) and the number of entries. ok is false
// (and nothing is left open) on a read error, a bad signature or another
// version.
func openIndexStream(p string) (f *os.File, r *indexReader, size int64, version, count uint32, ok bool) {
	f, err := os.Open(p)
	if err != nil {
		return nil, nil, 0, 0, 0, false
	}
	fi, err := f.Stat()
	r = &indexReader{r: bufio.NewReaderSize(f, 32<<10)}
	var hdr [12]byte
	if err != nil || !r.read(hdr[:]) || string(hdr[:4]) != "DIRC" {
		f.Close()
		return nil, nil, 0, 0, 0, false
	}
	version = binary.BigEndian.Uint32(hdr[4:8])
	if version < 2 || version > 4 {
		f.Close()
		return nil, nil, 0, 0, 0, false
	}
	return f, r, fi.Size(), version, binary.BigEndian.Uint32(hdr[8:12]), true
}

// indexReader reads an index file in order, counting the bytes read.
type indexReader struct {
	r   *bufio.Reader
	off int64
}

func (r *indexReader) read(b []byte) bool {
	n, err := io.ReadFull(r.r, b)
	r.off += int64(n)
	return err == nil
}

func (r *indexReader) discard(n int64) bool {
	for n > 0 {
		step := int(min(n, 1<<20))
		got, err := r.r.Discard(step)
		r.off += int64(got)
		n -= int64(got)
		if err != nil {
			return false
		}
	}
	return true
}

// pastNUL reads up to and including the next NUL byte.
func (r *indexReader) pastNUL() bool {
	for {
		b, err := r.r.ReadSlice(0)
		r.off += int64(len(b))
		if !errors.Is(err, bufio.ErrBufferFull) {
			return err == nil
		}
	}
}

// pastVarint reads past a varint (a version 4 entry's count of bytes
// dropped from the previous path).
func (r *indexReader) pastVarint() bool {
	for {
		c, err := r.r.ReadByte()
		if err != nil {
			return false
		}
		r.off++
		if c&0x80 == 0 {
			return true
		}
	}
}

// entryPlain reads one entry (buf: room for its fixed part and flags)
// and tells whether it is plain and whether it is a gitlink.
func (r *indexReader) entryPlain(buf []byte, version uint32) (bool, bool) {
	start := r.off
	if !r.read(buf) {
		return false, false
	}
	fixed := len(buf) - 2 // stat data, mode, uid, gid, size, then the id
	mode := binary.BigEndian.Uint32(buf[24:28])
	flags := binary.BigEndian.Uint16(buf[fixed:])
	// A sparse directory, assume-unchanged, a conflict stage, or extended
	// flags (skip-worktree, intent-to-add and any other) are refused.
	if mode&0o170000 == 0o040000 || flags&0xf000 != 0 {
		return false, false
	}
	link := mode&0o170000 == 0o160000
	if version == 4 {
		// A varint (bytes dropped from the previous path), then the rest
		// of the path, NUL-terminated; no padding.
		if !r.pastVarint() {
			return false, false
		}
		return r.pastNUL(), link
	}
	if !r.pastNUL() {
		return false, false
	}
	// NUL padding to a multiple of 8 (at least one, read already).
	size := r.off - 1 - start
	return r.discard(start + (size+8)&^7 - r.off), link
}

// extensionsPlain reads the extensions after the entries, up to the
// trailing checksum (the file is size bytes): a split index ("link")
// keeps entries elsewhere, a sparse one ("sdir") collapses directories.
func (r *indexReader) extensionsPlain(size int64, oidLen int) bool {
	var hdr [8]byte
	for r.off+8 <= size-int64(oidLen) {
		if !r.read(hdr[:]) {
			return false
		}
		if sig := string(hdr[:4]); sig == "link" || sig == "sdir" {
			return false
		}
		if !r.discard(int64(binary.BigEndian.Uint32(hdr[4:8]))) {
			return false
		}
	}
	return true
}
