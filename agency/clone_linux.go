package agency

import (
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// cloneFile makes out a copy-on-write clone of in (FICLONE: btrfs, XFS,
// bcachefs, …). false means the file system cannot; copy the bytes.
func cloneFile(out, in *os.File) bool {
	return unix.IoctlFileClone(int(out.Fd()), int(in.Fd())) == nil
}

// lchtimes sets a symlink's own modification time.
func lchtimes(path string, t time.Time) {
	ts := []unix.Timespec{unix.NsecToTimespec(t.UnixNano()), unix.NsecToTimespec(t.UnixNano())}
	// Best effort, as for the files' times (a symlink's own time is
	// cosmetic: git and the tools compare what it points to).
	_ = unix.UtimesNanoAt(unix.AT_FDCWD, path, ts, unix.AT_SYMLINK_NOFOLLOW)
}
