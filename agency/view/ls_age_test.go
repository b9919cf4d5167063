package view

import (
	"testing"
	"time"

	"github.com/git-agency/git-agency/store"
)

func TestSettledLongAgo(t *testing.T) {
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	at := func(d time.Duration) *string { return store.Str(now.Add(-d).Format(time.RFC3339)) }
	for _, c := range []struct {
		name string
		r    store.InvocationRecord
		want bool
	}{
		{"landed two days ago", store.InvocationRecord{LandingStatus: store.Str(store.LandingLanded), LandedAt: at(48 * time.Hour)}, true},
		{"landed an hour ago", store.InvocationRecord{LandingStatus: store.Str(store.LandingLanded), LandedAt: at(time.Hour)}, false},
		{"discarded two days ago", store.InvocationRecord{LandingStatus: store.Str(store.LandingDiscarded), DiscardedAt: at(48 * time.Hour)}, true},
		{"discarded, no time: finished", store.InvocationRecord{LandingStatus: store.Str(store.LandingDiscarded), FinishedAt: at(30 * time.Hour)}, true},
		{"pending for a week", store.InvocationRecord{LandingStatus: store.Str(store.LandingPending), FinishedAt: at(7 * 24 * time.Hour)}, false},
		{"running", store.InvocationRecord{Status: store.StatusRunning}, false},
	} {
		if got := SettledLongAgo(&c.r, now); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}
