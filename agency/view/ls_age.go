package view

import (
	"time"

	"github.com/git-agency/git-agency/store"
)

// SettledKeep is how long `agent ls` keeps showing a landed or discarded
// invocation without --all.
const SettledKeep = 24 * time.Hour

// SettledLongAgo tells whether r was landed or discarded more than
// SettledKeep before now (when it was landed or discarded, else when it
// finished): `agent ls` leaves it out unless --all.
func SettledLongAgo(r *store.InvocationRecord, now time.Time) bool {
	var at *string
	switch store.Deref(r.LandingStatus) {
	case store.LandingLanded:
		at = r.LandedAt
	case store.LandingDiscarded:
		at = r.DiscardedAt
	default:
		return false
	}
	if at == nil {
		at = r.FinishedAt
	}
	t, err := time.Parse(time.RFC3339, store.Deref(at))
	return err == nil && now.Sub(t) > SettledKeep
}
