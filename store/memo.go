package store

import (
	"encoding/json"
	"errors"
	"os"
	"sync"
	"time"

	"github.com/git-agency/git-agency/errs"
	"github.com/git-agency/git-agency/internal/filestamp"
)

// watch refreshes every second and, for every running invocation, reads
// its meta.json, its checkpoints.json and its live status: files that most
// seconds have not changed. The file memo keeps what was decoded from such
// a file while the file's stamp is the one it had when it was read (and
// the file was settled then: see internal/filestamp), so an unchanged file
// costs one stat.

// memoLimit bounds the memo (paths of records long gone): past it, it
// starts again empty.
const memoLimit = 4096

// fileMemo is the memo of one Store; nil keeps nothing. Kept values are
// never modified: readers hand out copies.
type fileMemo struct {
	mu      sync.Mutex
	entries map[string]memoEntry
	// now is the clock files are settled by (tests set it).
	now func() time.Time
}

type memoEntry struct {
	file filestamp.Stamp
	val  any
	err  error
}

// read returns decode(path's content), reusing the value kept for path
// while fi, path's stat, matches the stamp it was kept under. A read
// error is returned as is and never kept; decode's error is kept like a
// value (the same bytes fail the same way).
func (m *fileMemo) read(path string, fi os.FileInfo, decode func([]byte) (any, error)) (any, error) {
	return m.load(path, fi, func() (any, bool, error) {
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, false, err
		}
		val, err := decode(data)
		return val, true, err
	})
}

// load returns what load makes of path, reusing the value kept for path
// while fi, path's stat taken before, matches the stamp it was kept
// under. What load returns with keep false is not kept.
func (m *fileMemo) load(path string, fi os.FileInfo, load func() (val any, keep bool, err error)) (any, error) {
	id := filestamp.Of(fi)
	if m != nil {
		m.mu.Lock()
		e, ok := m.entries[path]
		m.mu.Unlock()
		if ok && e.file == id {
			return e.val, e.err
		}
	}

	val, keep, err := load()
	if m == nil {
		return val, err
	}

	now := time.Now
	if m.now != nil {
		now = m.now
	}

	m.mu.Lock()
	defer m.mu.Unlock()

	if m.entries == nil || len(m.entries) >= memoLimit {
		m.entries = map[string]memoEntry{}
	}

	// fi was taken before the load: a file replaced in between is kept
	// under the older stamp, so it is read again next time.
	if keep && id.Settled(now()) {
		m.entries[path] = memoEntry{file: id, val: val, err: err}
	} else {
		delete(m.entries, path)
	}

	return val, err
}

// ReadFileMemo is decode(path's content), decoded again only when the file
// changed since the last call for path (see the file memo above). The
// value is shared with later calls: callers must not modify it (copy it).
func (s *Store) ReadFileMemo(path string, decode func([]byte) (any, error)) (any, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	return s.memo.read(path, fi, decode)
}

// readInvocationMemo is ReadInvocation for a scan that has just taken
// meta.json's stat fi: a copy of the record, decoded again only when the
// file changed.
func (s *Store) readInvocationMemo(id string, fi os.FileInfo) (*InvocationRecord, error) {
	path := s.InvocationMetaPath(id)
	v, err := s.memo.read(path, fi, func(data []byte) (any, error) {
		var rec InvocationRecord
		if err := json.Unmarshal(data, &rec); err != nil {
			return nil, errs.StoreCorrupt(path, err)
		}
		return &rec, nil
	})
	if err != nil {
		return nil, err
	}

	rec := *v.(*InvocationRecord)
	return &rec, nil
}

// CheckpointsError is the error ReadCheckpoints would return (nil when
// checkpoints.json decodes or is missing), the file decoded again only
// when it changed.
func (s *Store) CheckpointsError(inv string) error {
	path := s.CheckpointsPath(inv)
	_, err := s.ReadFileMemo(path, func(data []byte) (any, error) {
		var f CheckpointsFile
		if err := json.Unmarshal(data, &f); err != nil {
			return nil, errs.StoreCorrupt(path, err)
		}
		return nil, nil
	})
	if err == nil || os.IsNotExist(err) {
		return nil
	}
	if e := (*errs.Error)(nil); errors.As(err, &e) {
		return e
	}

	return errs.IO("read", path, err)
}

// invocationNames is ReadDirNames of the invocations directory, listed
// again only when the directory changed (an entry made, removed or
// renamed gives it a new modification time). The names are shared:
// callers must not modify them.
func (s *Store) invocationNames() ([]string, error) {
	dir := s.InvocationsDir()
	fi, err := os.Stat(dir)
	if err != nil {
		return ReadIDDirs(dir)
	}

	v, err := s.memo.load(dir, fi, func() (any, bool, error) {
		names, err := ReadIDDirs(dir)
		return names, err == nil, err
	})
	if err != nil {
		return nil, err
	}

	return v.([]string), nil
}
