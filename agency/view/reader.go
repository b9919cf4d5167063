// Package view is the read model: what `agent ls`, `agent show` and watch
// see of the invocations (InvocationView, the display status derived from
// the record, the runner's status, the stream and the stall detector), the
// conflict forecast of pending invocations (cached in forecast.json), and
// how long a settled invocation stays listed. It reads: the forecast cache
// is the one file it may write.
//
// agency.App is its only caller: it builds a Reader for each call, with the
// App's core, landing (what land would refuse, what it would replay) and a
// Host that answers what the read model asks of the rest of agency. This
// package never imports agency.
package view

import (
	"context"

	"github.com/git-agency/git-agency/agency/internal/core"
	"github.com/git-agency/git-agency/agency/land"
	"github.com/git-agency/git-agency/store"
)

// Reader reads one repository's invocations: one command's core, landing,
// and the rest of agency it asks.
type Reader struct {
	core.Core
	Land *land.Lander
	Host Host
}

// Host is what the read model asks of the rest of agency (agency.App
// answers).
type Host interface {
	// SyncHosts brings the invocations of other machines up to date.
	SyncHosts(ctx context.Context)
	// HostDisplay sets a host invocation's display from what its host said.
	HostDisplay(v *InvocationView)
	// ResolveInvocation finds an invocation by id, prefix or name.
	ResolveInvocation(query string) (*store.InvocationRecord, error)
	// View is the outcome of a dead supervisor, in memory only.
	View(ctx context.Context, r *store.InvocationRecord) *store.InvocationRecord
	// QueuePlaces maps each queued invocation to its place (1 = next).
	QueuePlaces(list []store.InvocationEntry) map[string]int
	// CheckpointsError says why an invocation's checkpoints fail, or "".
	CheckpointsError(rec *store.InvocationRecord) string
	// CheckpointsDamaged says its checkpoints.json is damaged.
	CheckpointsDamaged(rec *store.InvocationRecord) string
}
