// Package filestamp tells, without reading a file, whether it may have
// changed since a value was derived from it: by its stamp (size,
// modification time, inode). Long-lived readers (watch, every second)
// keep what they decoded from files under their stamps.
//
// A stamp can repeat: a file rewritten within the file system's timestamp
// granularity, at the same size, keeps its modification time (and an
// atomic rename may reuse an inode). So a value may be kept only when the
// file was already RacyWindow old when it was looked at (Settled): any
// later write gives the file a newer modification time. This is what git
// does with its racily clean index entries.
package filestamp

import (
	"os"
	"syscall"
	"time"
)

// RacyWindow is how old a file must be for a value derived from it to be
// kept under its stamp.
const RacyWindow = 2 * time.Second

// Stamp identifies one state of a file; the zero Stamp is a missing file.
type Stamp struct {
	Exists      bool
	Size, MTime int64 // MTime in nanoseconds
	Ino         uint64
}

// Of is the stamp of a file from its FileInfo.
func Of(fi os.FileInfo) Stamp {
	s := Stamp{Exists: true, Size: fi.Size(), MTime: fi.ModTime().UnixNano()}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		s.Ino = uint64(st.Ino)
	}
	return s
}

// Lstat is path's stamp (the zero Stamp when it does not exist) and
// whether it is a symbolic link; err is any other failure.
func Lstat(path string) (s Stamp, symlink bool, err error) {
	fi, err := os.Lstat(path)
	if os.IsNotExist(err) {
		return Stamp{}, false, nil
	}
	if err != nil {
		return Stamp{}, false, err
	}
	return Of(fi), fi.Mode()&os.ModeSymlink != 0, nil
}

// Settled reports whether a value derived from the file at now may be
// kept under s: the file is missing, or was modified at least RacyWindow
// before now.
func (s Stamp) Settled(now time.Time) bool {
	return !s.Exists || s.MTime <= now.Add(-RacyWindow).UnixNano()
}
