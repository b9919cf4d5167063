package gitcore

import "syscall"

// statMatches lstats path and compares it with the index entry e as git
// does: same (its stat data is e's: times to the nanosecond, inode and
// size, all as the index truncates them; not the owner, see below) and ok
// (it exists, and its type and executable bit are e's; git would report
// anything else).
func statMatches(path string, e statEntry) (same, ok bool) {
	var st syscall.Stat_t
	if err := syscall.Lstat(path, &st); err != nil {
		return false, false
	}
	switch e.mode & 0o170000 {
	case 0o100000:
		if st.Mode&syscall.S_IFMT != syscall.S_IFREG || (st.Mode&0o100 != 0) != (e.mode&0o100 != 0) {
			return false, false
		}
	case 0o120000:
		if st.Mode&syscall.S_IFMT != syscall.S_IFLNK {
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
	same = uint32(st.Mtim.Sec) == e.mtime && uint32(st.Mtim.Nsec) == e.mtim &&
		uint32(st.Ctim.Sec) == e.ctime && uint32(st.Ctim.Nsec) == e.ctimeN &&
		uint32(st.Ino) == e.ino && uint32(st.Size) == e.size
	return same, true
}
