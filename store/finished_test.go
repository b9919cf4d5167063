package store

import (
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
	if e.Facts == nil || e.Facts.LastOutput.IsZero() || !e.Facts.CheckpointsDamaged {
		t.Fatalf("landed record's facts = %+v", e.Facts)
	}
	if first[pending.InvocationID].Facts != nil {
		t.Fatal("a pending record was treated as finished")
	}
	if _, err := os.Stat(s.FinishedCachePath()); err != nil {
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
	os.WriteFile(s.FinishedCachePath(), []byte("garbage"), 0o600)
	if e := scan()[landed.InvocationID]; e.Record == nil || e.Facts == nil {
		t.Fatalf("damaged cache: %+v", e)
	}
	if c := s.readFinishedCache(); len(c) != 1 {
		t.Fatalf("cache not rebuilt: %d entries", len(c))
	}

	// A record that went away leaves the cache.
	os.RemoveAll(s.InvocationDir(landed.InvocationID))
	scan()
	if c := s.readFinishedCache(); len(c) != 0 {
		t.Fatalf("cache keeps a removed record: %v", c)
	}
}
