package index

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// Map maps the index file at path read-only (git replaces it whole, a lock
// file renamed over it, and maps it itself): at 100k files that spares
// copying megabytes into fresh memory, and the heap of a reader that only
// walks it. Close unmaps it.
func Map(path string) (*File, bool) {
	f, err := os.Open(path)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil || st.Size <= 0 || st.Size != int64(int(st.Size)) {
		return nil, false
	}

	data, err := unix.Mmap(int(f.Fd()), 0, int(st.Size), unix.PROT_READ, unix.MAP_SHARED|unix.MAP_POPULATE)
	if err != nil {
		return nil, false
	}

	return &File{Data: data, MtimeSec: st.Mtim.Sec, MtimeNsec: st.Mtim.Nsec, Stamp: stampOf(&st), mapped: true}, true
}

// StampOf is the Stamp of the index file at path as it is now, "" when it
// cannot be read.
func StampOf(path string) string {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		return ""
	}
	return stampOf(&st)
}

func stampOf(st *unix.Stat_t) string {
	return fmt.Sprintf("%d %d %d %d.%09d %d.%09d", st.Dev, st.Ino, st.Size, st.Mtim.Sec, st.Mtim.Nsec, st.Ctim.Sec, st.Ctim.Nsec)
}

func (f *File) unmap() { unix.Munmap(f.Data) }
