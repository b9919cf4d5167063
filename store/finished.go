package store

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/gob"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/git-agency/git-agency/errs"
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
//
// Checking a thousand meta.json files with stat still costs a thousand
// system calls a scan, so the cache is also tagged with the records'
// generation (records.gen): every store write that rewrites a finished
// record (WriteInvocation) marks the generation dirty before it writes and
// clean, under a new token, after. A scan that finds the generation clean
// and equal to the cache's tag serves cached records without looking at
// their files; any other scan checks each one as above, and tags what it
// writes only when the generation was clean and unchanged from its start
// to its end. A writer killed between the two marks leaves the generation
// dirty: scans check every file (correct, only slower) until the next
// writer or gc marks it clean. A meta.json edited by hand is not seen by
// a trusting scan (a listing); `doctor` checks every file
// (ScanInvocationsChecked) and a command that names one invocation reads
// its file (agency's ResolveInvocation).

// FinishedFacts is what read paths derive from a finished invocation's
// files besides meta.json.
type FinishedFacts struct {
	// LastOutput is the newest non-empty log's modification time.
	LastOutput time.Time
	// CheckpointsDamaged: checkpoints.json does not decode.
	CheckpointsDamaged bool
	// TreeGone: the sandbox tree was gone (removed by land, discard or
	// gc). A tree made again for a record that stays finished (undo)
	// marks the records generation (FinishedRecordsChanged).
	TreeGone bool
}

// finishedCacheVersion changes whenever the cached layout does.
const finishedCacheVersion = 2

type finishedCache struct {
	Version int
	// Gen is the clean records generation the entries were checked
	// against ("" when none: they are checked on every scan).
	Gen     string
	Entries map[string]finishedEntry
}

type finishedEntry struct {
	ModTime int64 // meta.json's, in nanoseconds
	Size    int64
	Record  InvocationRecord
	Facts   FinishedFacts
}

// finishedCachePath is the cache of finished invocation records.
func (s *Store) finishedCachePath() string {
	return filepath.Join(s.RepoDir(), "finished-invocations.cache")
}

// isFinished reports whether a record can never change again: ended
// (finished or failed), landed or discarded, no land in progress.
func isFinished(r *InvocationRecord) bool {
	if r == nil || (r.Status != StatusFinished && r.Status != StatusFailed) {
		return false
	}
	if r.Land != nil && r.Land.State == LandInProgress {
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
	gen     string
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

// readFinishedCache returns the cached entries and the generation they
// were checked against.
func (s *Store) readFinishedCache() (map[string]finishedEntry, string) {
	f, err := os.Open(s.finishedCachePath())
	if err != nil {
		return nil, ""
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, ""
	}

	if m := s.finished; m != nil {
		m.mu.Lock()
		defer m.mu.Unlock()
		if m.entries != nil && m.file == fileIDOf(fi) {
			return m.entries, m.gen
		}
	}

	var c finishedCache
	if err := gob.NewDecoder(bufio.NewReader(f)).Decode(&c); err != nil || c.Version != finishedCacheVersion {
		return nil, ""
	}
	if m := s.finished; m != nil {
		m.file, m.gen, m.entries = fileIDOf(fi), c.Gen, c.Entries
	}

	return c.Entries, c.Gen
}

func (s *Store) writeFinishedCache(entries map[string]finishedEntry, gen string) {
	var b bytes.Buffer
	if err := gob.NewEncoder(&b).Encode(finishedCache{Version: finishedCacheVersion, Gen: gen, Entries: entries}); err != nil {
		return
	}

	// Best effort: a cache that cannot be written is rebuilt next time.
	if WriteFileAtomic(s.finishedCachePath(), b.Bytes(), 0o600) != nil {
		return
	}

	if m := s.finished; m != nil {
		if fi, err := os.Stat(s.finishedCachePath()); err == nil {
			m.mu.Lock()
			m.file, m.gen, m.entries = fileIDOf(fi), gen, entries
			m.mu.Unlock()
		}
	}
}

// recordsGenPath is the records generation file (see above).
func (s *Store) recordsGenPath() string {
	return filepath.Join(s.RepoDir(), "records.gen")
}

const (
	genClean = "clean"
	genDirty = "dirty"
)

// readRecordsGen returns the generation's token when it is clean, and ""
// when it is dirty, missing or unreadable (nothing may be trusted then).
func (s *Store) readRecordsGen() string {
	b, err := os.ReadFile(s.recordsGenPath())
	if err != nil {
		return ""
	}
	tok, state, ok := strings.Cut(strings.TrimSuffix(string(b), "\n"), " ")
	if !ok || state != genClean || tok == "" {
		return ""
	}
	return tok
}

// writeRecordsGen replaces the generation with a new token in the given
// state, durably (a dirty mark must reach the disk before the record it
// announces).
func (s *Store) writeRecordsGen(state string) error {
	line, err := recordsGenLine(state)
	if err != nil {
		return err
	}
	return WriteFileAtomic(s.recordsGenPath(), []byte(line), 0o600)
}

// recordsGenLine is the generation file's content: a new random token and
// state.
func recordsGenLine(state string) (string, error) {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return hex.EncodeToString(b[:]) + " " + state + "\n", nil
}

// startRecordsGen makes a missing generation file, clean, so that scans
// can start trusting the cache: a writer makes it dirty before anything
// else, so a missing one means none is under way. It never replaces an
// existing file (a link fails on one).
func (s *Store) startRecordsGen() {
	path := s.recordsGenPath()
	if _, err := os.Lstat(path); err == nil {
		return
	}

	line, err := recordsGenLine(genClean)
	if err != nil {
		return
	}

	f, err := os.CreateTemp(s.RepoDir(), ".records.gen.tmp-"+writerTag(os.Getpid())+"*")
	if err != nil {
		return
	}

	_, werr := f.WriteString(line)
	if cerr := f.Close(); werr == nil && cerr == nil {
		_ = os.Link(f.Name(), path)
	}

	os.Remove(f.Name())
}

// changingFinishedRecords marks the records generation dirty around fn,
// which rewrites or removes what a finished record's cache entry holds.
// When the dirty mark cannot be written, fn does not run. A failure to
// mark it clean afterwards is not fn's failure: scans stay slower until
// the next mark.
func (s *Store) changingFinishedRecords(fn func() error) error {
	if err := s.writeRecordsGen(genDirty); err != nil {
		return errs.IO("write", s.recordsGenPath(), err)
	}
	err := fn()
	_ = s.writeRecordsGen(genClean)
	return err
}

// FinishedRecordsChanged tells trusting scans that something outside
// meta.json that a finished record's cache entry derives from changed
// (a sandbox tree made again by undo, which a killed undo may leave
// before it rewrites the record), so that the next scan checks every
// record. The caller holds the repo lock.
func (s *Store) FinishedRecordsChanged() error {
	return s.changingFinishedRecords(func() error { return nil })
}

// finishedFacts derives a finished record's facts from its files.
func (s *Store) finishedFacts(inv string) FinishedFacts {
	_, err := s.ReadCheckpoints(inv)
	_, treeErr := os.Lstat(s.SandboxTreePath(inv))
	return FinishedFacts{LastOutput: s.LastOutput(inv), CheckpointsDamaged: err != nil, TreeGone: os.IsNotExist(treeErr)}
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

// RepairRecordsGen marks a records generation left dirty (a writer killed
// between its marks) clean again, so that scans trust the cache again. The
// caller holds the repo lock, so no writer is between its marks now.
func (s *Store) RepairRecordsGen() error {
	if err := s.RequireLock("repairing " + s.recordsGenPath()); err != nil {
		return err
	}
	if !s.RecordsGenDirty() {
		return nil
	}
	return s.writeRecordsGen(genClean)
}

// RecordsGenDirty reports whether the records generation was left dirty
// (a file read: callers look before they take the lock to repair it).
func (s *Store) RecordsGenDirty() bool {
	b, err := os.ReadFile(s.recordsGenPath())
	return err == nil && strings.HasSuffix(strings.TrimSuffix(string(b), "\n"), " "+genDirty)
}
