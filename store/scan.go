package store

import (
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/git-agency/git-agency/errs"
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
	// Facts is set for a finished record (see isFinished).
	Facts *FinishedFacts
}

// ScanWorktrees reads integration_worktrees/*/meta.json. There is no index:
// the directory is the truth. Unreadable records come back Broken.
func (s *Store) ScanWorktrees() ([]WorktreeEntry, error) {
	names, err := ReadIDDirs(s.IntegrationWorktreesDir())
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
	return s.WriteWorktreeThen(rec, nil)
}

// WriteWorktreeThen is WriteWorktree with a step run between the temp
// file's fsync and its rename (see writeJSONAtomicThen).
func (s *Store) WriteWorktreeThen(rec *WorktreeRecord, beforeRename func() error) error {
	if err := s.RequireLock("writing worktree record " + rec.WorktreeID); err != nil {
		return err
	}
	return writeJSONAtomicThen(s.IntegrationWorktreeMetaPath(rec.WorktreeID), rec, beforeRename)
}

// ScanInvocations reads invocations/*/meta.json, sorted by id (ids start
// with their creation time). Finished records come from the
// finished-record cache: without looking at their files while the records
// generation is unchanged, otherwise while their meta.json is unchanged
// (one stat each); see finished.go.
func (s *Store) ScanInvocations() ([]InvocationEntry, error) {
	return s.scanInvocations(true)
}

// ScanInvocationsChecked is ScanInvocations that checks every cached
// record against its meta.json whatever the generation says (doctor: a
// record edited by hand is seen).
func (s *Store) ScanInvocationsChecked() ([]InvocationEntry, error) {
	return s.scanInvocations(false)
}

func (s *Store) scanInvocations(trustGen bool) ([]InvocationEntry, error) {
	names, err := s.invocationNames()
	if err != nil {
		return nil, err
	}

	s.startRecordsGen()
	gen := s.readRecordsGen()
	cache, cacheGen := s.readFinishedCache()
	trusted := trustGen && gen != "" && cacheGen == gen

	// keep holds the cache entries checked against their files; hits,
	// those served from a trusted cache: copied into keep only when the
	// cache is written (a scan that changes nothing copies nothing).
	keep := map[string]finishedEntry{}
	var hits []string
	changed := false

	// Paths by concatenation: filepath.Join cleans every one, and a
	// thousand records are three thousand joins a scan.
	root := s.InvocationsDir() + string(filepath.Separator)
	out := make([]InvocationEntry, 0, len(names))
	for _, id := range names {
		e := InvocationEntry{ID: id, Dir: root + id}
		c, cached := cache[id]
		if cached && trusted {
			hits = append(hits, id)
			e.fromCache(c)
		} else if s.scanOne(&e, c, cached, keep) {
			changed = true
		}

		out = append(out, e)
	}

	// Tag what was checked with the generation only when no writer
	// marked it between the start of the scan and now.
	tag := ""
	if gen != "" && s.readRecordsGen() == gen {
		tag = gen
	}

	if changed || len(keep)+len(hits) != len(cache) || tag != cacheGen {
		for _, id := range hits {
			keep[id] = cache[id]
		}
		s.writeFinishedCache(keep, tag)
	}

	sort.SliceStable(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

func (e *InvocationEntry) fromCache(c finishedEntry) {
	rec, facts := c.Record, c.Facts
	e.Record, e.Facts = &rec, &facts
}

// scanOne fills e from the cache entry c when its meta.json is unchanged,
// else from the file, and keeps a finished record in keep. It reports
// whether keep got a new entry.
func (s *Store) scanOne(e *InvocationEntry, c finishedEntry, cached bool, keep map[string]finishedEntry) bool {
	// Stat before reading: a record replaced in between is keyed by the
	// older time, so it is read again next time.
	fi, statErr := os.Stat(e.Dir + string(filepath.Separator) + "meta.json")
	if cached && statErr == nil && fi.ModTime().UnixNano() == c.ModTime && fi.Size() == c.Size {
		keep[e.ID] = c
		e.fromCache(c)
		return false
	}

	var rec *InvocationRecord
	var err error
	if statErr == nil {
		// A running record's meta.json is mostly unchanged since the
		// last scan (watch scans every second): decoded again only
		// when it changed.
		rec, err = s.readInvocationMemo(e.ID, fi)
	} else {
		rec, err = s.ReadInvocation(e.ID)
	}

	switch {
	case err != nil:
		e.Broken, e.Err = true, err
	case rec.InvocationID != e.ID:
		e.Broken, e.Err = true, errInconsistent
	default:
		s.withOutcome(rec)
		e.Record = rec
		if statErr == nil && isFinished(rec) {
			facts := s.finishedFacts(e.ID)
			keep[e.ID] = finishedEntry{ModTime: fi.ModTime().UnixNano(), Size: fi.Size(), Record: *rec, Facts: facts}
			e.Facts = &facts
			return true
		}
	}

	return false
}

// ReadInvocation reads one invocation record by id.
func (s *Store) ReadInvocation(id string) (*InvocationRecord, error) {
	var rec InvocationRecord
	if err := ReadJSON(s.InvocationMetaPath(id), &rec); err != nil {
		return nil, err
	}
	s.withOutcome(&rec)
	return &rec, nil
}

// WriteInvocation writes an invocation record atomically. It does not
// check the repo lock: `agent start` writes a new record under it, reconcile
// repairs one under it, and tests write fixtures. Change an existing record
// with UpdateInvocation or UpdateInvocationLocked.
func (s *Store) WriteInvocation(rec *InvocationRecord) error {
	old, err := s.ReadInvocation(rec.InvocationID)
	return s.writeInvocation(rec, err == nil && isFinished(old))
}

// WriteNewInvocationThen writes the first record of an invocation (one
// not on disk yet) with a step run between the temp file's fsync and its
// rename (see writeJSONAtomicThen).
func (s *Store) WriteNewInvocationThen(rec *InvocationRecord, beforeRename func() error) error {
	return writeJSONAtomicThen(s.InvocationMetaPath(rec.InvocationID), rec, beforeRename)
}

// writeInvocation writes rec; wasFinished says the record on disk is
// finished, so the finished-record cache may hold it (finished.go).
func (s *Store) writeInvocation(rec *InvocationRecord, wasFinished bool) error {
	// Written, the record no longer waits for anything.
	rec.RecordPending = ""
	if err := s.checkWrite(s.InvocationMetaPath(rec.InvocationID)); err != nil {
		return errs.IO("write", s.InvocationMetaPath(rec.InvocationID), err)
	}
	write := func() error { return writeJSONAtomic(s.InvocationMetaPath(rec.InvocationID), rec) }
	if wasFinished {
		return s.changingFinishedRecords(write)
	}
	return write()
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

// ReadIDDirs is ReadDirNames of a directory of records or trees
// (integration_worktrees/, invocations/, sandboxes/, verify/): only the
// names that are ids. A directory named otherwise is not ours (a user's
// backup copy, notes, a sync tool's conflict folder): every scan, and so
// gc and doctor, leaves it alone.
func ReadIDDirs(dir string) ([]string, error) {
	names, err := ReadDirNames(dir)
	out := names[:0]
	for _, n := range names {
		if ValidID(n) {
			out = append(out, n)
		}
	}
	return out, err
}

// DirSize returns the bytes used by regular files under dir (best effort).
func DirSize(dir string) int64 {
	var n int64
	// The walk's function never fails: what cannot be read is not counted.
	_ = filepath.WalkDir(dir, func(_ string, d os.DirEntry, err error) error {
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

	wasFinished := isFinished(rec)

	if err := fn(rec); err != nil {
		return nil, err
	}
	if err := s.writeInvocation(rec, wasFinished); err != nil {
		return nil, err
	}

	return rec, nil
}
