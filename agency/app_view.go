package agency

import (
	"context"
	"time"

	"github.com/git-agency/git-agency/agency/view"
	"github.com/git-agency/git-agency/store"
)

// The read model lives in package view; these are its names as agency's
// callers (cli, watch) know them.
type (
	// InvocationView is an invocation as read paths show it.
	InvocationView = view.InvocationView
	// ListOptions filter ListInvocations.
	ListOptions = view.ListOptions
	// Forecast is the conflict forecast of a pending invocation.
	Forecast = view.Forecast
)

// Names of the read model (package view).
const (
	ConflictsIntegration   = view.ConflictsIntegration
	DisplayQueued          = view.DisplayQueued
	DisplayWorktreeRemoved = view.DisplayWorktreeRemoved
	SettledKeep            = view.SettledKeep
)

// reader is the read model for one call: a's core as it is now, landing,
// and a as its host.
func (a *App) reader() *view.Reader {
	return &view.Reader{Core: a.core(), Land: a.lander(), Host: viewHost{a}}
}

// ListInvocations scans and derives display status; a read
// (view.Reader.ListInvocations).
func (a *App) ListInvocations(ctx context.Context, opts ListOptions) ([]InvocationView, error) {
	return a.reader().ListInvocations(ctx, opts)
}

// Statuses is the record and display of each of ids from one scan
// (view.Reader.Statuses).
func (a *App) Statuses(ctx context.Context, ids []string) map[string]*InvocationView {
	return a.reader().Statuses(ctx, ids)
}

// ShowInvocation resolves and derives display status; a read
// (view.Reader.ShowInvocation).
func (a *App) ShowInvocation(ctx context.Context, query string) (*InvocationView, error) {
	return a.reader().ShowInvocation(ctx, query)
}

// Forecasts returns the forecast of every pending invocation among recs
// (view.Reader.Forecasts).
func (a *App) Forecasts(ctx context.Context, recs []*store.InvocationRecord) map[string]*Forecast {
	return a.reader().Forecasts(ctx, recs)
}

// WorktreeForecasts is the forecast of every pending invocation of one
// integration worktree (view.Reader.WorktreeForecasts).
func (a *App) WorktreeForecasts(ctx context.Context, worktreeID string) map[string]*Forecast {
	return a.reader().WorktreeForecasts(ctx, worktreeID)
}

// StallThreshold is agency.stallThreshold (view.Reader.StallThreshold).
func (a *App) StallThreshold() time.Duration { return a.reader().StallThreshold() }

// DisplayStatus derives what a person should see for an invocation
// (view.Reader.DisplayStatus).
func (a *App) DisplayStatus(r *store.InvocationRecord, lastOutput time.Time) string {
	return a.reader().DisplayStatus(r, lastOutput)
}

// DirtyRefused is forecast f as land gives it while the integration tree
// has uncommitted changes (view.DirtyRefused).
func DirtyRefused(f *Forecast) *Forecast { return view.DirtyRefused(f) }

// SettledLongAgo reports whether r settled more than SettledKeep before
// now (view.SettledLongAgo).
func SettledLongAgo(r *store.InvocationRecord, now time.Time) bool {
	return view.SettledLongAgo(r, now)
}

// viewHost is what the read model asks of the rest of agency (view.Host).
type viewHost struct{ a *App }

func (h viewHost) SyncHosts(ctx context.Context) { h.a.lookAtHosts(ctx) }

func (h viewHost) HostDisplay(v *InvocationView) { h.a.hostDisplay(v) }

func (h viewHost) ResolveInvocation(query string) (*store.InvocationRecord, error) {
	return h.a.ResolveInvocation(query)
}

func (h viewHost) View(ctx context.Context, r *store.InvocationRecord) *store.InvocationRecord {
	return h.a.View(ctx, r)
}

func (h viewHost) QueuePlaces(list []store.InvocationEntry) map[string]int {
	return QueuePlaces(list)
}

func (h viewHost) CheckpointsError(rec *store.InvocationRecord) string {
	return h.a.checkpointsError(rec)
}

func (h viewHost) CheckpointsDamaged(rec *store.InvocationRecord) string {
	return h.a.checkpointsDamaged(rec)
}
