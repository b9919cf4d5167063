package gitcore

import (
	"io"
	"os"
	"path/filepath"
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
	data, _, ok = readOpenedSmall(f, max)
	return data, ok
}

// readOpenedSmall reads the opened f (and closes it) when it is a regular
// file of at most max bytes; it returns its FileInfo too.
func readOpenedSmall(f *os.File, max int64) ([]byte, os.FileInfo, bool) {
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return nil, nil, false
	}

	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil || int64(len(data)) > max {
		return nil, nil, false
	}

	return data, fi, true
}

// readSmallFileBeneath is readSmallFile of rel (slash-separated) inside
// the directory root, opened beneath it: a link on the way that leads out
// of root is not followed (os.Root), nor a link in its last component. It
// also returns the opened file's FileInfo.
func readSmallFileBeneath(root, rel string, max int64) ([]byte, os.FileInfo, bool) {
	r, err := os.OpenRoot(root)
	if err != nil {
		return nil, nil, false
	}
	defer r.Close()

	f, err := r.OpenFile(filepath.FromSlash(rel), os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, false
	}
	return readOpenedSmall(f, max)
}
