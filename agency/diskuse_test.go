package agency

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/git-agency/git-agency/store"
)

// A size measured while the agent ran stands only its minute, even when it
// was taken in the second the agent ended (finished_at has whole seconds:
// 12:00:05.3 is after 12:00:05, yet the agent wrote on until 12:00:05.9).
// One measured in a later second stands until the tree goes.
func TestDiskBytesCachedInTheSecondTheRunEnded(t *testing.T) {
	st, err := store.Open(filepath.Join(t.TempDir(), "data"), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	inv := "20260101120000-d15c"
	tree := st.SandboxTreePath(inv)
	if err := os.MkdirAll(tree, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tree, "f"), make([]byte, 64<<10), 0o600); err != nil {
		t.Fatal(err)
	}
	end := time.Date(2026, 1, 1, 12, 0, 5, 0, time.UTC)
	a := &App{Store: st, Now: func() time.Time { return end.Add(time.Hour) }}
	rec := &store.InvocationRecord{InvocationID: inv, Status: store.StatusFinished,
		FinishedAt: store.Str(end.Format(time.RFC3339))}
	cache := func(at time.Time) {
		t.Helper()
		b, _ := json.Marshal(diskUse{Bytes: 7, ComputedAt: at.Format(time.RFC3339Nano)})
		if err := os.WriteFile(filepath.Join(st.SandboxDir(inv), "disk_usage.json"), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cache(end.Add(300 * time.Millisecond))
	if got := a.DiskBytes(rec); got == 7 {
		t.Fatalf("DiskBytes = 7: a size measured in the second the run ended stood after its minute")
	}
	cache(end.Add(time.Second))
	if got := a.DiskBytes(rec); got != 7 {
		t.Fatalf("DiskBytes = %d, want the cached 7 (measured after the run ended)", got)
	}
}
