package store

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"

	"github.com/git-agency/git-agency/errs"
)

// writeJSONAtomic writes v as indented JSON to path: a temp file in the same
// directory, fsync, rename, fsync the directory. Readers see the old or the
// new file, never half of one.
func writeJSONAtomic(path string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return errs.Internal("encode %s: %v", path, err)
	}
	return WriteFileAtomic(path, append(data, '\n'), 0o600)
}

// writeJSONAtomicThen is writeJSONAtomic with a step run after the temp
// file's fsync and before its rename (a failpoint: a kill there leaves the
// temp file and no record). An error from it removes the temp file.
func writeJSONAtomicThen(path string, v any, beforeRename func() error) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return errs.Internal("encode %s: %v", path, err)
	}
	return writeFileAtomic(path, append(data, '\n'), 0o600, beforeRename, true)
}

// WriteFileAtomic writes data to path atomically with the given mode.
func WriteFileAtomic(path string, data []byte, perm os.FileMode) error {
	return writeFileAtomic(path, data, perm, nil, true)
}

// WriteJSONCache writes v as JSON to path like writeJSONAtomic (readers
// see the old or the new file), without the fsyncs: for a cache derived
// from other state, which a reader that cannot decode it computes again.
// A crash may leave it empty or unreadable, never half of one that
// decodes.
func WriteJSONCache(path string, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return errs.Internal("encode %s: %v", path, err)
	}
	return writeFileAtomic(path, append(data, '\n'), 0o600, nil, false)
}

func writeFileAtomic(path string, data []byte, perm os.FileMode, beforeRename func() error, sync bool) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-"+writerTag(os.Getpid())+"*")
	if err != nil {
		return errs.IO("write", path, err)
	}

	tmp := f.Name()
	fail := func(err error) error {
		f.Close()
		os.Remove(tmp)
		return errs.IO("write", path, err)
	}
	if err := f.Chmod(perm); err != nil {
		return fail(err)
	}
	if _, err := f.Write(data); err != nil {
		return fail(err)
	}

	if sync {
		if err := f.Sync(); err != nil {
			return fail(err)
		}
	}

	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return errs.IO("write", path, err)
	}

	killAtRecordWrite()

	if beforeRename != nil {
		if err := beforeRename(); err != nil {
			os.Remove(tmp)
			return err
		}
	}

	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return errs.IO("write", path, err)
	}

	if !sync {
		return nil
	}

	if d, err := os.Open(dir); err == nil {
		// The rename is done: a file system that cannot sync a directory
		// (some answer EINVAL) still has the file.
		_ = d.Sync()
		d.Close()
	}

	return nil
}

// ReadJSON reads path into v. A missing file is returned as is
// (os.IsNotExist); a file that does not decode is E_STORE_CORRUPT.
func ReadJSON(path string, v any) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, v); err != nil {
		return errs.StoreCorrupt(path, err)
	}
	return nil
}

// RemoveAllInside removes path recursively, but only when path lies strictly
// inside root (both cleaned, symlinks in root resolved). It is the only
// RemoveAll git-agency uses on data it did not just create.
func RemoveAllInside(root, path string) error {
	if err := CheckInside(root, path); err != nil {
		return err
	}
	if err := os.RemoveAll(path); err != nil {
		return errs.IO("remove", path, err)
	}
	return nil
}

// CheckInside returns E_UNSAFE_PATH unless path lies strictly inside root.
func CheckInside(root, path string) error {
	r, err := filepath.Abs(root)
	if err != nil {
		return errs.UnsafePath(path, root)
	}

	p, err := filepath.Abs(path)
	if err != nil {
		return errs.UnsafePath(path, root)
	}

	r, p = filepath.Clean(r), filepath.Clean(p)
	if rr, err := filepath.EvalSymlinks(r); err == nil {
		r = rr
		// Resolve the parent of path too, so both sides compare alike.
		if pp, err := filepath.EvalSymlinks(filepath.Dir(p)); err == nil {
			p = filepath.Join(pp, filepath.Base(p))
		}
	}

	rel, err := filepath.Rel(r, p)
	if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return errs.UnsafePath(path, root)
	}

	return nil
}

// recordWriteFailpoint is the prefix of the failpoint that kills a command
// inside its nth atomic write ($AGENCY_FAILPOINT=kill:record-write:<n>,
// counted from 1 in each process): SIGKILL with the temp file written and
// fsynced, not yet renamed. e2e/killsweep.sh sweeps n over every write a
// command makes.
const recordWriteFailpoint = "kill:record-write:"

// recordWrites counts this process's atomic writes for
// recordWriteFailpoint.
var recordWrites atomic.Int64

// killAtRecordWrite kills this process when recordWriteFailpoint names
// the write being made.
func killAtRecordWrite() {
	n, ok := strings.CutPrefix(os.Getenv("AGENCY_FAILPOINT"), recordWriteFailpoint)
	if !ok {
		return
	}
	if strconv.FormatInt(recordWrites.Add(1), 10) == n {
		syscall.Kill(os.Getpid(), syscall.SIGKILL)
	}
}
