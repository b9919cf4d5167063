package repofiles

import (
	"os"
	"syscall"
)

// OwnedByUs is git's ownership test of a repository path (lstat, owner is
// the effective user); anything else, root's sudo rule included, is left
// to git.
func OwnedByUs(path string) bool {
	var st syscall.Stat_t
	if err := syscall.Lstat(path, &st); err != nil {
		return false
	}
	return int(st.Uid) == os.Geteuid()
}

// deviceOf is the filesystem dir is on (git's discovery stops where it
// changes).
func deviceOf(dir string) (uint64, bool) {
	var st syscall.Stat_t
	if err := syscall.Stat(dir, &st); err != nil {
		return 0, false
	}
	return uint64(st.Dev), true
}
