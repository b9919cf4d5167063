package store

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

func memoStore(t *testing.T) *Store {
	return &Store{DataDir: t.TempDir(), RepoID: "r", memo: &fileMemo{}}
}

// writeAged writes path (in place, keeping its inode) and sets its
// modification time to mtime.
func writeAged(t *testing.T, path, content string, mtime time.Time) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, mtime, mtime); err != nil {
		t.Fatal(err)
	}
}

func runningMeta(id, summary string) string {
	return `{"schema_version":"1","invocation_id":"` + id + `","status":"running","runner":"sh","semantic_summary":"` + summary + `"}`
}

// wantSummary fails unless a scan gives id the semantic summary want;
// why says what the step checks.
func wantSummary(t *testing.T, s *Store, id, want, why string) {
	t.Helper()
	if got := scanSummary(t, s, id); got != want {
		t.Fatalf("%s: summary %q, want %q", why, got, want)
	}
}

func scanSummary(t *testing.T, s *Store, id string) string {
	t.Helper()
	list, err := s.ScanInvocations()
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range list {
		if e.ID == id {
			if e.Record == nil {
				t.Fatalf("%s is broken: %v", id, e.Err)
			}
			return e.Record.SemanticSummary
		}
	}
	t.Fatalf("%s not scanned", id)
	return ""
}

// A running record's meta.json is decoded again exactly when its stamp
// changed: a new content at another time or size is seen; the memo keeps
// the old value only for a file whose stamp is unchanged.
func TestScanMemoSeesChangedRecord(t *testing.T) {
	s := memoStore(t)
	id := "20260101000000-aaaa"
	path := s.InvocationMetaPath(id)
	old := time.Now().Add(-time.Hour)
	writeAged(t, path, runningMeta(id, "one"), old)
	wantSummary(t, s, id, "one", "first scan")
	// Same size, same time, same inode: the stamp is unchanged, so the
	// memo answers (this is what saves the read).
	writeAged(t, path, runningMeta(id, "two"), old)
	wantSummary(t, s, id, "one", "the memo was not used for an unchanged stamp")
	// A write at another time is seen.
	writeAged(t, path, runningMeta(id, "two"), old.Add(time.Second))
	wantSummary(t, s, id, "two", "a rewrite at another time")
	// So is one of another size at the same time.
	writeAged(t, path, runningMeta(id, "three"), old.Add(time.Second))
	wantSummary(t, s, id, "three", "a rewrite of another size")
	// And an atomic replacement (another inode) at the same time and size.
	tmp := path + ".new"
	writeAged(t, tmp, runningMeta(id, "four!"), old.Add(time.Second))
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
	wantSummary(t, s, id, "four!", "a replacement (another inode)")
	// A record copy handed out is the caller's: changing it changes
	// nothing for the next scan.
	list, _ := s.ScanInvocations()
	list[0].Record.SemanticSummary = "changed by a caller"
	wantSummary(t, s, id, "four!", "a caller's change reached the memo")
}

// A file read while it was fresh is not kept: a second write within the
// file system's timestamp granularity (same time, same size, same inode)
// is seen.
func TestScanMemoRacyFile(t *testing.T) {
	s := memoStore(t)
	id := "20260101000000-bbbb"
	path := s.InvocationMetaPath(id)
	now := time.Now()
	s.memo.now = func() time.Time { return now }
	writeAged(t, path, runningMeta(id, "one"), now.Add(-time.Second))
	wantSummary(t, s, id, "one", "first scan")
	writeAged(t, path, runningMeta(id, "two"), now.Add(-time.Second))
	wantSummary(t, s, id, "two", "a racily fresh file was kept")
}

// CheckpointsError follows checkpoints.json: damaged, repaired, removed.
func TestCheckpointsErrorSeesChange(t *testing.T) {
	s := memoStore(t)
	inv := "20260101000000-cccc"
	path := s.CheckpointsPath(inv)
	if err := s.CheckpointsError(inv); err != nil {
		t.Fatalf("missing file: %v", err)
	}
	old := time.Now().Add(-time.Hour)
	writeAged(t, path, `{"checkpoints":[]}`, old)
	if err := s.CheckpointsError(inv); err != nil {
		t.Fatalf("good file: %v", err)
	}
	writeAged(t, path, `{"checkpoints":[`, old.Add(time.Second))
	if err := s.CheckpointsError(inv); err == nil {
		t.Fatal("a damaged checkpoints.json was not seen")
	}
	if _, err := s.ReadCheckpoints(inv); err == nil {
		t.Fatal("ReadCheckpoints reads the damaged file")
	}
	writeAged(t, path, `{"checkpoints":[]}`, old.Add(2*time.Second))
	if err := s.CheckpointsError(inv); err != nil {
		t.Fatalf("repaired file: %v", err)
	}
	os.Remove(path)
	if err := s.CheckpointsError(inv); err != nil {
		t.Fatalf("removed file: %v", err)
	}
}

// The invocations directory is listed again when a record is added,
// removed or renamed, and not otherwise.
func TestScanMemoSeesNewRecords(t *testing.T) {
	s := memoStore(t)
	// Every file counts as old enough to be kept.
	s.memo.now = func() time.Time { return time.Now().Add(time.Hour) }
	old := time.Now().Add(-time.Hour)
	ids := func() []string {
		t.Helper()
		list, err := s.ScanInvocations()
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, e := range list {
			out = append(out, e.ID)
		}
		return out
	}
	// Each change to the directory is given its own time (two within
	// the clock's granularity would share one: the racy window, tested
	// above, covers those).
	step := 0
	changed := func() {
		t.Helper()
		step++
		at := old.Add(time.Duration(step) * time.Second)
		if err := os.Chtimes(s.InvocationsDir(), at, at); err != nil {
			t.Fatal(err)
		}
	}
	a, b, c := "20260101000000-aaaa", "20260101000000-bbbb", "20260101000000-cccc"
	writeAged(t, s.InvocationMetaPath(a), runningMeta(a, "a"), old)
	changed()
	if got := ids(); len(got) != 1 || got[0] != a {
		t.Fatalf("ids %v, want [%s]", got, a)
	}
	writeAged(t, s.InvocationMetaPath(b), runningMeta(b, "b"), old)
	changed()
	if got := ids(); len(got) != 2 || got[1] != b {
		t.Fatalf("ids %v after a new record, want [%s %s]", got, a, b)
	}
	if err := os.Rename(s.InvocationDir(b), s.InvocationDir(c)); err != nil {
		t.Fatal(err)
	}
	changed()
	if got := ids(); len(got) != 2 || got[1] != c {
		t.Fatalf("ids %v after a rename, want [%s %s]", got, a, c)
	}
	if err := os.RemoveAll(s.InvocationDir(a)); err != nil {
		t.Fatal(err)
	}
	changed()
	if got := ids(); len(got) != 1 || got[0] != c {
		t.Fatalf("ids %v after a removal, want [%s]", got, c)
	}
}
