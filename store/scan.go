package store

import (
	"os"
	"path/filepath"
	"sort"
	"time"
)

// WorktreeEntry is one scanned integration worktree record directory.
type WorktreeEntry struct {
	ID     string // from the directory name
	Dir    string
	Record *WorktreeRecord // nil when broken
	Broken bool
	Err    error
}

// InvocationEntry is one scanned invocation record directory.
type InvocationEntry struct {
	ID     string
	Dir    string
	Record *InvocationRecord
	Broken bool
	Err    error
	// Facts is set for a finished record (see Finished).
	Facts *FinishedFacts
}

// ScanWorktrees reads integration_worktrees/*/meta.json. There is no index:
// the directory is the truth. Unreadable records come back Broken.
func (s *Store) ScanWorktrees() ([]WorktreeEntry, error) {
	names, err := ReadDirNames(s.IntegrationWorktreesDir())
	if err != nil {
		return nil, err
	}
	var out []WorktreeEntry
	for _, id := range names {
		e := WorktreeEntry{ID: id, Dir: s.IntegrationWorktreeDir(id)}
		var rec WorktreeRecord
		if err := ReadJSON(s.IntegrationWorktreeMetaPath(id), &rec); err != nil {
			e.Broken, e.Err = true, err
		} else if rec.WorktreeID != id || rec.Name == "" || rec.State == "" {
			e.Broken, e.Err = true, errInconsistent
		} else {
			e.Record = &rec
		}
		out = append(out, e)
	}
	sort.SliceStable(out, func(i, j int) bool {
		ci, cj := createdAt(out[i].Record), createdAt(out[j].Record)
		if ci != cj && ci != "" && cj != "" {
			return ci < cj
		}
		return out[i].ID < out[j].ID
	})
	return out, nil
}

func createdAt(r *WorktreeRecord) string {
	if r == nil {
		return ""
	}
	return r.CreatedAt
}

// ReadWorktree reads one worktree record by id.
func (s *Store) ReadWorktree(id string) (*WorktreeRecord, error) {
	var rec WorktreeRecord
	if err := ReadJSON(s.IntegrationWorktreeMetaPath(id), &rec); err != nil {
		return nil, err
	}
	return &rec, nil
}

// WriteWorktree writes a worktree record atomically. It expects the caller
// to hold the repo lock (a worktree record is read, changed and written back
// by create, rm, adopt, land and agent start) and refuses with E_INTERNAL
// when it does not.
func (s *Store) WriteWorktree(rec *WorktreeRecord) error {
	if err := s.RequireLock("writing worktree record " + rec.WorktreeID); err != nil {
		return err
	}
	return WriteJSONAtomic(s.IntegrationWorktreeMetaPath(rec.WorktreeID), rec)
}

// ScanInvocations reads invocations/*/meta.json, sorted by id (ids start
// with their creation time). Finished records come from the
// finished-record cache while their meta.json is unchanged (one stat
// each); see finished.go.
func (s *Store) ScanInvocations() ([]InvocationEntry, error) {
	names, err := ReadDirNames(s.InvocationsDir())
	if err != nil {
		return nil, err
	}
	cache := s.readFinishedCache()
	keep := make(map[string]finishedEntry, len(cache))
	changed := false
	// Paths by concatenation: filepath.Join cleans every one, and a
	// thousand records are three thousand joins a scan.
	root := s.InvocationsDir() + string(filepath.Separator)
	out := make([]InvocationEntry, 0, len(names))
	for _, id := range names {
		e := InvocationEntry{ID: id, Dir: root + id}
		// Stat before reading: a record replaced in between is keyed by
		// the older time, so it is read again next time.
		fi, statErr := os.Stat(e.Dir + string(filepath.Separator) + "meta.json")
		if c, ok := cache[id]; ok && statErr == nil && fi.ModTime().UnixNano() == c.ModTime && fi.Size() == c.Size {
			keep[id] = c
			rec, facts := c.Record, c.Facts
			e.Record, e.Facts = &rec, &facts
			out = append(out, e)
			continue
		}
		rec, err := s.ReadInvocation(id)
		if err != nil {
			e.Broken, e.Err = true, err
		} else if rec.InvocationID != id {
			e.Broken, e.Err = true, errInconsistent
		} else {
			e.Record = rec
			if statErr == nil && Finished(rec) {
				facts := s.finishedFacts(id)
				keep[id] = finishedEntry{ModTime: fi.ModTime().UnixNano(), Size: fi.Size(), Record: *rec, Facts: facts}
				e.Facts = &facts
				changed = true
			}
		}
		out = append(out, e)
	}
	if changed || len(keep) != len(cache) {
		s.writeFinishedCache(keep)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// ReadInvocation reads one invocation record by id.
func (s *Store) ReadInvocation(id string) (*InvocationRecord, error) {
	var rec InvocationRecord
	if err := ReadJSON(s.InvocationMetaPath(id), &rec); err != nil {
		return nil, err
	}
	return &rec, nil
}

// WriteInvocation writes an invocation record atomically. It does not
// check the repo lock: `agent start` writes a new record under it, reconcile
// repairs one under it, and tests write fixtures. Change an existing record
// with UpdateInvocation or UpdateInvocationLocked.
func (s *Store) WriteInvocation(rec *InvocationRecord) error {
	return WriteJSONAtomic(s.InvocationMetaPath(rec.InvocationID), rec)
}

type inconsistentError struct{}

func (inconsistentError) Error() string {
	return "meta.json does not match its directory (id, name or state missing or wrong)"
}

var errInconsistent error = inconsistentError{}

// readDirNames lists the subdirectories of dir, skipping dot entries
// (temp files). A missing dir is empty.
func ReadDirNames(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		if os.IsNotExist(err) {
			return nil, nil
		}
		return nil, err
	}
	var names []string
	for _, e := range ents {
		if !e.IsDir() || e.Name()[0] == '.' {
			continue
		}
		names = append(names, e.Name())
	}
	return names, nil
}

// DirSize returns the bytes used by regular files under dir (best effort).
func DirSize(dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(_ string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if info, err := d.Info(); err == nil {
				n += info.Size()
			}
		}
		return nil
	})
	return n
}

// UpdateInvocation is a read-modify-write of an invocation record under the
// repo lock (held only for this short section). fn may return an error to
// abort without writing.
func (s *Store) UpdateInvocation(timeout time.Duration, id string, fn func(*InvocationRecord) error) (*InvocationRecord, error) {
	l, err := s.Lock(timeout)
	if err != nil {
		return nil, err
	}
	defer l.Unlock()
	return s.UpdateInvocationLocked(id, fn)
}

// UpdateInvocationLocked is UpdateInvocation for a caller that already holds
// the repo lock. It expects that lock held by this Store (Lock) for the
// whole read-modify-write, and refuses with E_INTERNAL, changing nothing,
// when it is not.
func (s *Store) UpdateInvocationLocked(id string, fn func(*InvocationRecord) error) (*InvocationRecord, error) {
	if err := s.RequireLock("updating invocation record " + id); err != nil {
		return nil, err
	}
	rec, err := s.ReadInvocation(id)
	if err != nil {
		return nil, err
	}
	if err := fn(rec); err != nil {
		return nil, err
	}
	if err := s.WriteInvocation(rec); err != nil {
		return nil, err
	}
	return rec, nil
}
