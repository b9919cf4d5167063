package store

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func finishedRecord(id, landing string) *InvocationRecord {
	return &InvocationRecord{SchemaVersion: SchemaVersion, InvocationID: id, Status: StatusFinished,
		StartedAt: "2026-01-01T00:00:00Z", LandingStatus: Str(landing), Runner: "sh"}
}

// Finished records are served from the cache while meta.json is unchanged
// (a damaged cache is rebuilt); a rewritten one is read again; running and
// pending ones are never cached.
func TestScanInvocationsFinishedCache(t *testing.T) {
	t.Run("one scan per process", func(t *testing.T) { testFinishedCache(t, &Store{DataDir: t.TempDir(), RepoID: "r"}) })
	// A long-lived process (watch) keeps the decoded cache between scans.
	t.Run("kept between scans", func(t *testing.T) {
		testFinishedCache(t, &Store{DataDir: t.TempDir(), RepoID: "r", finished: &finishedMemo{}})
	})
}

func testFinishedCache(t *testing.T, s *Store) {
	write := func(rec *InvocationRecord) {
		t.Helper()
		os.MkdirAll(s.InvocationDir(rec.InvocationID), 0o700)
		if err := s.WriteInvocation(rec); err != nil {
			t.Fatal(err)
		}
	}
	landed := finishedRecord("20260101000000-aaaa", LandingLanded)
	pending := finishedRecord("20260101000000-bbbb", LandingPending)
	write(landed)
	write(pending)
	os.MkdirAll(s.SandboxLogsDir(landed.InvocationID), 0o700)
	os.WriteFile(filepath.Join(s.SandboxLogsDir(landed.InvocationID), "raw.jsonl"), []byte("x\n"), 0o600)
	os.MkdirAll(s.SandboxDir(landed.InvocationID), 0o700)
	os.WriteFile(s.CheckpointsPath(landed.InvocationID), []byte("{not json"), 0o600)

	scan := func() map[string]InvocationEntry {
		t.Helper()
		list, err := s.ScanInvocations()
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]InvocationEntry{}
		for _, e := range list {
			m[e.ID] = e
		}
		return m
	}
	first := scan()
	e := first[landed.InvocationID]
	if e.Facts == nil || e.Facts.LastOutput.IsZero() || !e.Facts.CheckpointsDamaged || !e.Facts.TreeGone {
		t.Fatalf("landed record's facts = %+v", e.Facts)
	}
	if first[pending.InvocationID].Facts != nil {
		t.Fatal("a pending record was treated as finished")
	}
	if _, err := os.Stat(s.finishedCachePath()); err != nil {
		t.Fatalf("no cache written: %v", err)
	}

	// Served from the cache: meta.json is not read (an unreadable one
	// would say so).
	os.Chmod(s.InvocationMetaPath(landed.InvocationID), 0)
	defer os.Chmod(s.InvocationMetaPath(landed.InvocationID), 0o600)
	if os.Getuid() != 0 {
		if e := scan()[landed.InvocationID]; e.Broken || e.Record == nil || e.Record.Runner != "sh" {
			t.Fatalf("cached record not served: %+v", e)
		}
	}
	os.Chmod(s.InvocationMetaPath(landed.InvocationID), 0o600)

	// Rewritten (another size and time): read again.
	landed.Runner = "another-runner"
	write(landed)
	future := time.Now().Add(time.Hour)
	os.Chtimes(s.InvocationMetaPath(landed.InvocationID), future, future)
	if e := scan()[landed.InvocationID]; e.Record == nil || e.Record.Runner != "another-runner" {
		t.Fatalf("rewritten record not read again: %+v", e.Record)
	}

	// A damaged cache is ignored and rewritten.
	os.WriteFile(s.finishedCachePath(), []byte("garbage"), 0o600)
	if e := scan()[landed.InvocationID]; e.Record == nil || e.Facts == nil {
		t.Fatalf("damaged cache: %+v", e)
	}
	if c, _ := s.readFinishedCache(); len(c) != 1 {
		t.Fatalf("cache not rebuilt: %d entries", len(c))
	}

	// A record that went away leaves the cache.
	os.RemoveAll(s.InvocationDir(landed.InvocationID))
	scan()
	if c, _ := s.readFinishedCache(); len(c) != 0 {
		t.Fatalf("cache keeps a removed record: %v", c)
	}
}

// While the records generation is clean and unchanged, cached finished
// records are served without looking at their files; a store write of a
// finished record, a generation left dirty (a writer killed between its
// marks) and a checked scan (doctor) all look again.
func TestScanInvocationsRecordsGeneration(t *testing.T) {
	s := &Store{DataDir: t.TempDir(), RepoID: "r"}
	landed := finishedRecord("20260101000000-aaaa", LandingLanded)
	os.MkdirAll(s.InvocationDir(landed.InvocationID), 0o700)
	if err := s.WriteInvocation(landed); err != nil {
		t.Fatal(err)
	}
	scan := func(checked bool) *InvocationRecord {
		t.Helper()
		f := s.ScanInvocations
		if checked {
			f = s.ScanInvocationsChecked
		}
		list, err := f()
		if err != nil || len(list) != 1 || list[0].Record == nil {
			t.Fatalf("scan: %v %v", list, err)
		}
		return list[0].Record
	}
	// handEdit rewrites meta.json behind the store's back, with another
	// size and time: only a scan that looks at the file sees it.
	edits := 0
	handEdit := func() string {
		t.Helper()
		edits++
		r := *landed
		r.Runner = fmt.Sprintf("hand-edited-%d", edits)
		b, _ := json.Marshal(&r)
		os.WriteFile(s.InvocationMetaPath(r.InvocationID), b, 0o600)
		future := time.Now().Add(time.Duration(edits) * time.Hour)
		os.Chtimes(s.InvocationMetaPath(r.InvocationID), future, future)
		return r.Runner
	}
	scan(false) // caches the record, tagged with the generation
	if _, gen := s.readFinishedCache(); gen == "" || gen != s.readRecordsGen() {
		t.Fatalf("cache tagged %q, generation %q", gen, s.readRecordsGen())
	}
	edited := handEdit()
	if r := scan(false); r.Runner != "sh" {
		t.Fatalf("trusting scan looked at the file: runner %q", r.Runner)
	}
	if r := scan(true); r.Runner != edited {
		t.Fatalf("checked scan did not look: runner %q", r.Runner)
	}

	// A store write marks the generation: the next scan reads the record.
	scan(false)
	before := s.readRecordsGen()
	landed.Runner = "rewritten"
	if err := s.WriteInvocation(landed); err != nil {
		t.Fatal(err)
	}
	if after := s.readRecordsGen(); after == "" || after == before {
		t.Fatalf("generation %q -> %q: not renewed", before, after)
	}
	if r := scan(false); r.Runner != "rewritten" {
		t.Fatalf("rewritten record served stale: runner %q", r.Runner)
	}
	// So does UpdateInvocationLocked.
	l, err := s.Lock(time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.UpdateInvocationLocked(landed.InvocationID, func(r *InvocationRecord) error { r.Runner = "updated"; return nil }); err != nil {
		t.Fatal(err)
	}
	l.Unlock()
	if r := scan(false); r.Runner != "updated" {
		t.Fatalf("updated record served stale: runner %q", r.Runner)
	}

	// A writer killed between its marks: the generation stays dirty and
	// nothing is trusted (the cache is not tagged either).
	os.WriteFile(s.recordsGenPath(), []byte("abc dirty\n"), 0o600)
	scan(false)
	if _, gen := s.readFinishedCache(); gen != "" {
		t.Fatalf("cache tagged %q under a dirty generation", gen)
	}
	if want := handEdit(); scan(false).Runner != want {
		t.Fatal("dirty generation trusted")
	}
	// The next mark (gc, or any writer) makes it clean again.
	if err := s.FinishedRecordsChanged(); err != nil {
		t.Fatal(err)
	}
	scan(false)
	if _, gen := s.readFinishedCache(); gen == "" {
		t.Fatal("cache not tagged after the generation was marked clean")
	}
}

// A missing generation file is made clean by a scan, never replacing one
// that exists (a writer's dirty mark).
func TestStartRecordsGen(t *testing.T) {
	s := &Store{DataDir: t.TempDir(), RepoID: "r"}
	os.MkdirAll(s.RepoDir(), 0o700)
	s.startRecordsGen()
	if s.readRecordsGen() == "" {
		t.Fatal("no clean generation made")
	}
	os.WriteFile(s.recordsGenPath(), []byte("abc dirty\n"), 0o600)
	s.startRecordsGen()
	if b, _ := os.ReadFile(s.recordsGenPath()); string(b) != "abc dirty\n" {
		t.Fatalf("replaced: %q", b)
	}
	if m, _ := filepath.Glob(filepath.Join(s.RepoDir(), ".records.gen.tmp-*")); len(m) != 0 {
		t.Fatalf("temp files left: %v", m)
	}
}
