package gitcore

import (
	"io"
	"os"
	"syscall"
)

// readSmallFile reads the file at p, at most max bytes, the way a file an
// agent may have replaced is read: never through a link in its last
// component, never waiting on a FIFO, only a regular file, and never more
// than max (ok is false for anything else). A sandbox's tree and its
// worktree git directory (HEAD, index, the racy-clean memo) are the
// agent's: a FIFO there hung the reader, a link to /dev/zero was read
// without end.
func readSmallFile(p string, max int64) (data []byte, ok bool) {
	f, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, false
	}
	defer f.Close()

	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil, false
	}

	data, err = io.ReadAll(io.LimitReader(f, max+1))
	if err != nil || int64(len(data)) > max {
		return nil, false
	}

	return data, true
}
