package store

import (
	"fmt"
	"os"
	"syscall"
)

// OpenLog opens a log file for writing (flag adds O_APPEND or O_TRUNC;
// O_CREATE and O_WRONLY are implied): never through a symbolic link, and
// only a regular file. A walled agent can write its own logs directory
// (its hooks append there), so it could leave a link to a file of the
// user's, or a FIFO, where git-agency later writes from outside the
// wall; such a log is refused, never followed.
func OpenLog(path string, flag int) (*os.File, error) {
	return openRegular(path, flag|os.O_CREATE|os.O_WRONLY, 0o600)
}

// ReadLog opens a log file for reading, under OpenLog's rules: never
// through a symbolic link, never blocking on a FIFO, and only a regular
// file.
func ReadLog(path string) (*os.File, error) {
	return openRegular(path, os.O_RDONLY, 0)
}

// openRegular opens path with flag, never through a symbolic link in its
// last component and never blocking on a FIFO, and keeps it only when it
// is a regular file.
func openRegular(path string, flag int, perm os.FileMode) (*os.File, error) {
	f, err := os.OpenFile(path, flag|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, perm)
	if err != nil {
		return nil, err
	}
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	return f, nil
}
