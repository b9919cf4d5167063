package gitcore

import (
	"path/filepath"
	"syscall"

	"golang.org/x/sys/unix"
)

// entryStatter lstats the files of one tree's index entries, which come
// in path order, directory by directory: each directory is opened once
// (O_PATH) and its files are looked up in it (fstatat), so the kernel
// walks the tree's long path once per directory rather than once per
// file. One per worker (its descriptor is its own).
type entryStatter struct {
	root string
	dir  string // the open directory, relative to root; "" when none
	fd   int
}

func newEntryStatter(root string) *entryStatter { return &entryStatter{root: root, fd: -1} }

// close closes the open directory.
func (s *entryStatter) close() {
	if s.fd >= 0 {
		unix.Close(s.fd)
	}
	s.dir, s.fd = "", -1
}

// match lstats the file name in dir (slash-separated, relative to the
// root; dir and the directories above it already checked to be real
// directories) and compares it with the index entry e (statDataMatches).
func (s *entryStatter) match(dir, name string, e statEntry) (same, ok bool) {
	if s.fd < 0 || dir != s.dir {
		s.close()
		fd, err := unix.Open(filepath.Join(s.root, filepath.FromSlash(dir)), unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			return false, false
		}
		s.dir, s.fd = dir, fd
	}

	var st unix.Stat_t
	if err := unix.Fstatat(s.fd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return false, false
	}

	return statDataMatches(uint32(st.Mode), st.Mtim, st.Ctim, st.Ino, st.Size, e)
}

// statDataMatches compares the lstat of a file (its mode, mtime, ctime,
// inode and size) with the index entry e as git does: same (its stat data
// is e's: times to the nanosecond, inode and size, all as the index
// truncates them; not the owner, see below) and ok (it exists, and its
// type and executable bit are e's; git would report anything else).
func statDataMatches(mode uint32, mtim, ctim unix.Timespec, ino uint64, size int64, e statEntry) (same, ok bool) {
	switch e.mode & 0o170000 {
	case 0o100000:
		if mode&syscall.S_IFMT != syscall.S_IFREG || (mode&0o100 != 0) != (e.mode&0o100 != 0) {
			return false, false
		}
	case 0o120000:
		if mode&syscall.S_IFMT != syscall.S_IFLNK {
			return false, false
		}
	default:
		return false, false
	}

	// The owner is not compared (git's status compares it, then finds the
	// content the same): a walled agent of root runs as another user of
	// its own user namespace, so the index its git wrote names that user
	// for every file, and a change of content changes mtime and ctime
	// anyway.
	same = uint32(mtim.Sec) == e.mtime && uint32(mtim.Nsec) == e.mtim &&
		uint32(ctim.Sec) == e.ctime && uint32(ctim.Nsec) == e.ctimeN &&
		uint32(ino) == e.ino && uint32(size) == e.size
	return same, true
}
