package land

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/git-agency/git-agency/agency/internal/core"
	"github.com/git-agency/git-agency/store"
)

// watch lands from goroutines of its own: landing notifications queued
// and flushed at once must not race (go test -race).
func TestNotesQueuedAndFlushedConcurrently(t *testing.T) {
	st, err := store.Open(filepath.Join(t.TempDir(), "data"), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	a := &Lander{Core: core.Core{Store: st, Now: time.Now}, Notes: &Notes{}}
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
	if n := a.Notes.Len(); n != 0 {
		t.Fatalf("%d notes left after a flush", n)
	}
}
