package agency

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/git-agency/git-agency/store"
)

// watch lands from goroutines of its own: landing notifications queued
// and flushed at once must not race (go test -race).
func TestNotesQueuedAndFlushedConcurrently(t *testing.T) {
	st, err := store.Open(filepath.Join(t.TempDir(), "data"), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	a := &App{Store: st, Now: time.Now}
	ctx := context.Background()
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(2)
		go func() {
			defer wg.Done()
			a.notifyLand(ctx, &store.InvocationRecord{InvocationID: "20260101120000-aaaa"}, NotifyLanded, "landed", "")
		}()
		go func() {
			defer wg.Done()
			a.flushNotify(ctx)
		}()
	}
	wg.Wait()
	a.flushNotify(ctx)
	if len(a.notes) != 0 {
		t.Fatalf("%d notes left after a flush", len(a.notes))
	}
}
