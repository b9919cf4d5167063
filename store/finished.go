package store

import (
	"bufio"
	"bytes"
	"encoding/gob"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"
)

// A landed or discarded invocation never changes again: read paths (ls,
// watch's every refresh, completion, resolve) would otherwise decode its
// meta.json, stat its logs and decode its checkpoints.json on every run,
// at a cost that grows with the history. The finished-record cache keeps
// those records decoded, with what read paths derive from their other
// files, keyed by meta.json's modification time and size: a record that
// changes anyway (an edit, `agent send`) no longer matches and is read
// again. The cache is derived data: readers write it without the lock
// (atomically; the last writer wins) and a damaged or missing one is
// rebuilt.

// FinishedFacts is what read paths derive from a finished invocation's
// files besides meta.json.
type FinishedFacts struct {
	// LastOutput is the newest non-empty log's modification time.
	LastOutput time.Time
	// CheckpointsDamaged: checkpoints.json does not decode.
	CheckpointsDamaged bool
}

// finishedCacheVersion changes whenever the cached layout does.
const finishedCacheVersion = 1

type finishedCache struct {
	Version int
	Entries map[string]finishedEntry
}

type finishedEntry struct {
	ModTime int64 // meta.json's, in nanoseconds
	Size    int64
	Record  InvocationRecord
	Facts   FinishedFacts
}

// FinishedCachePath is the cache of finished invocation records.
func (s *Store) FinishedCachePath() string {
	return filepath.Join(s.RepoDir(), "finished-invocations.cache")
}

// Finished reports whether a record can never change again: ended
// (finished or failed), landed or discarded, no land in progress.
func Finished(r *InvocationRecord) bool {
	if r == nil || (r.Status != StatusFinished && r.Status != StatusFailed) {
		return false
	}
	if r.Land != nil && r.Land.State == "in_progress" {
		return false
	}
	l := Deref(r.LandingStatus)
	return l == LandingLanded || l == LandingDiscarded
}

// finishedMemo is the cache file as last read or written by this process,
// with the file's identity then: a scan decodes the file again only when
// another process replaced it. Entries are never modified in place.
type finishedMemo struct {
	mu      sync.Mutex
	file    fileID
	entries map[string]finishedEntry
}

type fileID struct {
	size, mtime int64
	ino         uint64
}

func fileIDOf(fi os.FileInfo) fileID {
	id := fileID{size: fi.Size(), mtime: fi.ModTime().UnixNano()}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		id.ino = uint64(st.Ino)
	}
	return id
}

func (s *Store) readFinishedCache() map[string]finishedEntry {
	f, err := os.Open(s.FinishedCachePath())
	if err != nil {
		return nil
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil
	}
	if m := s.finished; m != nil {
		m.mu.Lock()
		defer m.mu.Unlock()
		if m.entries != nil && m.file == fileIDOf(fi) {
			return m.entries
		}
	}
	var c finishedCache
	if err := gob.NewDecoder(bufio.NewReader(f)).Decode(&c); err != nil || c.Version != finishedCacheVersion {
		return nil
	}
	if m := s.finished; m != nil {
		m.file, m.entries = fileIDOf(fi), c.Entries
	}
	return c.Entries
}

func (s *Store) writeFinishedCache(entries map[string]finishedEntry) {
	var b bytes.Buffer
	if err := gob.NewEncoder(&b).Encode(finishedCache{Version: finishedCacheVersion, Entries: entries}); err != nil {
		return
	}
	// Best effort: a cache that cannot be written is rebuilt next time.
	if WriteFileAtomic(s.FinishedCachePath(), b.Bytes(), 0o600) != nil {
		return
	}
	if m := s.finished; m != nil {
		if fi, err := os.Stat(s.FinishedCachePath()); err == nil {
			m.mu.Lock()
			m.file, m.entries = fileIDOf(fi), entries
			m.mu.Unlock()
		}
	}
}

// finishedFacts derives a finished record's facts from its files.
func (s *Store) finishedFacts(inv string) FinishedFacts {
	_, err := s.ReadCheckpoints(inv)
	return FinishedFacts{LastOutput: s.LastOutput(inv), CheckpointsDamaged: err != nil}
}

// LastOutput is the newest modification time of an invocation's non-empty
// logs (zero when there is none).
func (s *Store) LastOutput(inv string) time.Time {
	var newest time.Time
	for _, name := range []string{"raw.jsonl", "stderr.log", "pane.log"} {
		if fi, err := os.Stat(filepath.Join(s.SandboxLogsDir(inv), name)); err == nil && fi.Size() > 0 && fi.ModTime().After(newest) {
			newest = fi.ModTime()
		}
	}
	return newest
}
