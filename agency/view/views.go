package view

import (
	"context"
	"github.com/git-agency/git-agency/agency/internal/core"
	"time"

	"github.com/git-agency/git-agency/errs"
	"github.com/git-agency/git-agency/runner"
	"github.com/git-agency/git-agency/runner/stream"
	"github.com/git-agency/git-agency/store"
)

// InvocationView is an invocation as read paths show it.
type InvocationView struct {
	Record  *store.InvocationRecord
	ID      string
	Dir     string
	Broken  bool
	Err     error
	Display string
	// LastOutput is the freshest output time (record or log mtimes).
	LastOutput time.Time
	// CheckpointsError says why checkpoints fail ("" when they do not):
	// checkpoints.json is damaged.
	CheckpointsError string
	// Forecast is the conflict forecast of a pending invocation (nil
	// otherwise, or when it has nothing to land).
	Forecast *Forecast
	// QueuePlace is a queued invocation's place in the queue (1: next).
	QueuePlace int
	// treeGone: a finished record's sandbox tree is known gone (the
	// finished-record cache), so its disk use is 0 without a look.
	treeGone bool
}

// DiskUser gives a sandbox's disk use (agency.App.DiskBytes).
type DiskUser interface {
	DiskBytes(r *store.InvocationRecord) int64
}

// DiskBytes is the view's sandbox disk use (App.DiskBytes), 0 without a
// look when the tree is known gone.
func (v *InvocationView) DiskBytes(a DiskUser) int64 {
	if v.treeGone || v.Record == nil {
		return 0
	}
	return a.DiskBytes(v.Record)
}

// scan reads the invocation records.
func (a *Reader) scan() ([]store.InvocationEntry, error) {
	list, err := a.Store.ScanInvocations()
	if err != nil {
		return nil, errs.IO("scan", a.Store.InvocationsDir(), err)
	}
	return list, nil
}

// ListOptions filter ListInvocations.
type ListOptions struct {
	WorktreeID string // "" = all
	// IntegrationDirty: a pending invocation of an integration worktree
	// with uncommitted changes to tracked files (IntegrationDirty) has the
	// forecast land gives it, refused E_DIRTY_WORKTREE; each tree is
	// checked beside its forecast's merges.
	IntegrationDirty bool
}

// ListInvocations scans and derives display status. It is a read: it
// starts, stops and rewrites nothing (a record whose supervisor died shows
// the outcome reconcile would record: View); the forecast cache is the one
// file it may write (see withForecasts).
func (a *Reader) ListInvocations(ctx context.Context, opts ListOptions) ([]InvocationView, error) {
	a.Host.SyncHosts(ctx)
	list, err := a.scan()
	if err != nil {
		return nil, err
	}

	places := a.Host.QueuePlaces(list)
	archived := map[string]bool{}
	if wts, err := a.Store.ScanWorktrees(); err == nil {
		for _, w := range wts {
			if w.Record != nil && w.Record.State == store.StateArchived {
				archived[w.ID] = true
			}
		}
	}

	out := make([]InvocationView, 0, len(list))
	for _, e := range list {
		v := InvocationView{ID: e.ID, Dir: e.Dir, Broken: e.Broken, Err: e.Err}
		if e.Record != nil {
			if opts.WorktreeID != "" && e.Record.IntegrationWorktreeID != opts.WorktreeID {
				continue
			}

			if e.Facts != nil {
				// Finished: nothing to reconcile, and what its other
				// files say was derived once (store's finished cache).
				v.Record = e.Record
				v.LastOutput = core.NewestOutput(v.Record, e.Facts.LastOutput)
				v.QueuePlace = places[v.Record.InvocationID]
				v.treeGone = e.Facts.TreeGone
				a.withLive(&v)
				worktreeRemoved(&v, archived[v.Record.IntegrationWorktreeID])
				if e.Facts.CheckpointsDamaged {
					v.CheckpointsError = a.Host.CheckpointsDamaged(v.Record)
				}

				out = append(out, v)
				continue
			}

			v.Record = a.Host.View(ctx, e.Record)
			v.LastOutput = a.lastOutput(v.Record)
			v.QueuePlace = places[v.Record.InvocationID]
			a.withLive(&v)
			worktreeRemoved(&v, archived[v.Record.IntegrationWorktreeID])
			v.CheckpointsError = a.Host.CheckpointsError(v.Record)
		} else {
			if opts.WorktreeID != "" {
				continue
			}
			v.Display = "broken"
		}

		out = append(out, v)
	}

	a.withForecasts(ctx, out, opts.IntegrationDirty)
	return out, nil
}

// withForecasts attaches the conflict forecast to the pending views. The
// forecast is derived from the object ids it was computed from and cached
// in forecast.json (written atomically, without the lock): a cache any
// reader may write and anyone may delete, never a record.
func (a *Reader) withForecasts(ctx context.Context, views []InvocationView, withDirty bool) {
	var recs []*store.InvocationRecord
	for _, v := range views {
		if v.Record != nil && v.Display != DisplayWorktreeRemoved {
			recs = append(recs, v.Record)
		}
	}

	run := a.forecasts(ctx, recs, withDirty)
	for i := range views {
		r := views[i].Record
		if r == nil {
			continue
		}

		views[i].Forecast = run.out[r.InvocationID]
		if h := run.holds[r.InvocationID]; h != "" && views[i].Display == stream.StatusReadyToLand {
			views[i].Display = h
		}
		if f := views[i].Forecast; f != nil && f.Refused == "" && run.dirty[r.IntegrationWorktreeID] {
			views[i].Forecast = DirtyRefused(f)
		}
	}

	a.refMovedRefusals(views)
}

// DirtyRefused is forecast f as land gives it while the integration tree
// has uncommitted changes: refused E_DIRTY_WORKTREE, whatever the merge.
func DirtyRefused(f *Forecast) *Forecast {
	c := *f
	c.LandsCleanly, c.Refused = false, string(errs.EDirtyWorktree)
	return &c
}

// WorktreeForecasts is the forecast of every pending invocation of one
// integration worktree (show and land --check name the partners).
func (a *Reader) WorktreeForecasts(ctx context.Context, worktreeID string) map[string]*Forecast {
	list, err := a.Store.ScanInvocations()
	if err != nil {
		return nil
	}
	var recs []*store.InvocationRecord
	for _, e := range list {
		if e.Record != nil && e.Record.IntegrationWorktreeID == worktreeID {
			recs = append(recs, e.Record)
		}
	}
	return a.Forecasts(ctx, recs)
}

// ShowInvocation resolves and derives display status; a read, like
// ListInvocations.
func (a *Reader) ShowInvocation(ctx context.Context, query string) (*InvocationView, error) {
	a.Host.SyncHosts(ctx)
	rec, err := a.Host.ResolveInvocation(query)
	if err != nil {
		return nil, err
	}

	rec = a.Host.View(ctx, rec)
	if rec.Queued() {
		list, err := a.scan()
		if err != nil {
			return nil, err
		}

		v := &InvocationView{Record: rec, ID: rec.InvocationID, Dir: a.Store.InvocationDir(rec.InvocationID)}
		v.QueuePlace = a.Host.QueuePlaces(list)[rec.InvocationID]
		a.withLive(v)
		return v, nil
	}

	v := &InvocationView{Record: rec, ID: rec.InvocationID, Dir: a.Store.InvocationDir(rec.InvocationID)}
	v.LastOutput = a.lastOutput(rec)
	a.withLive(v)
	v.Display = a.Land.LandDisplay(ctx, rec, v.Display)
	if wt, err := a.Store.ReadWorktree(rec.IntegrationWorktreeID); err == nil {
		worktreeRemoved(v, wt.State == store.StateArchived)
	}

	v.CheckpointsError = a.Host.CheckpointsError(rec)
	if rec.Pending() && v.Display != DisplayWorktreeRemoved {
		v.Forecast = a.WorktreeForecasts(ctx, rec.IntegrationWorktreeID)[rec.InvocationID]
	}

	return v, nil
}

// DisplayQueued is the display status of a queued invocation.
const DisplayQueued = "queued"

// DisplayWorktreeRemoved is the display status of an ended invocation that
// was never landed or discarded and whose integration worktree was removed
// (`worktree rm --force` keeps such sandboxes): it cannot be landed any
// more (E_ARCHIVED), only inspected or discarded.
const DisplayWorktreeRemoved = "worktree removed"

func worktreeRemoved(v *InvocationView, archived bool) {
	if !archived || v.Record == nil || v.Record.Active() {
		return
	}
	if l := store.Deref(v.Record.LandingStatus); l == "" || l == store.LandingPending {
		v.Display = DisplayWorktreeRemoved
	}
}

func (a *Reader) lastOutput(r *store.InvocationRecord) time.Time {
	return core.NewestOutput(r, a.Store.LastOutput(r.InvocationID))
}

// StallThreshold is agency.stallThreshold (default 5m).
func (a *Reader) StallThreshold() time.Duration {
	d, _ := a.Config.Duration("agency.stallThreshold", 5*time.Minute)
	return d
}

// DisplayStatus derives what a person should see for an invocation.
func (a *Reader) DisplayStatus(r *store.InvocationRecord, lastOutput time.Time) string {
	d, _, _, _ := a.derive(r, lastOutput)
	return d
}

// derive computes, in this order of precedence, lifecycle (the record, after
// reconcile) → runner_status.json → the stream → the stall detector: the
// display status (watch's vocabulary: starting, active, stalled, needs
// input, ready to land, landed, discarded, failed) and, for a running
// invocation, its live semantic status, summary and the supervisor's
// logs/status.json (usage, session id: no log is parsed here). For a
// finished one the record's final values stand (semantic is "" then).
func (a *Reader) derive(r *store.InvocationRecord, lastOutput time.Time) (display, semantic, summary string, live *runner.LiveStatus) {
	in := stream.StatusInput{
		Lifecycle:       r.Status,
		LandingStatus:   store.Deref(r.LandingStatus),
		Semantic:        r.SemanticStatus,
		SemanticSummary: r.SemanticSummary,
		ExitReason:      store.Deref(r.ExitReason),
		ExitCode:        r.ExitCode,
		LastOutputAt:    lastOutput,
		Now:             a.Now(),
	}
	if r.Status == store.StatusRunning {
		// Only a running invocation can be stalled: the setting is not
		// looked up for each of a thousand finished ones.
		in.StallThreshold = a.StallThreshold()
		in.Runner = runner.TurnRunnerStatus(r)
		if live = runner.ReadLiveStatus(a.Store, r.InvocationID); live != nil {
			in.Stream = live.State
		}
	}

	st, sum := stream.DeriveStatus(in)
	if r.Status == store.StatusRunning {
		semantic, summary = st, sum
	}

	return displayOf(st), semantic, summary, live
}

// displayOf maps DeriveStatus's statuses to the display vocabulary: the
// runner's and the stream's statuses that want a person (needs_input,
// blocked, ready_for_review while still running, a failed turn) are all
// "needs input"; working is "active".
func displayOf(status string) string {
	if runner.NeedsUser(status) {
		return "needs input"
	}
	switch status {
	case stream.StatusWorking, stream.StatusActive:
		return "active"
	}
	return status // starting, stalled, ready to land, landed, discarded, failed, unknown
}

// withLive derives the display status of a view and, for a running
// invocation, puts the live semantic status and usage into a copy of its
// record (so ls, show and watch print them like the final ones).
func (a *Reader) withLive(v *InvocationView) {
	if v.Record.Queued() && v.Record.Host != "" {
		v.Display = DisplayQueued
		a.Host.HostDisplay(v)
		return
	}
	if v.Record.Queued() {
		v.Display = DisplayQueued
		return
	}

	d, sem, sum, live := a.derive(v.Record, v.LastOutput)
	v.Display = d
	if v.Record.Host != "" {
		a.Host.HostDisplay(v)
		return
	}

	if sem != "" {
		cp := *v.Record
		cp.SemanticStatus, cp.SemanticSummary = sem, sum
		if live != nil && live.State.Events > 0 && live.Format != runner.HeadedFormat {
			cp.Usage = runner.UsageRecord(live.Usage, cp.Turns)
		}
		if live != nil && live.SessionID != "" {
			cp.SessionID = live.SessionID
		}

		v.Record = &cp
	}
}

// Statuses is the record and display of each of ids (full invocation ids)
// as ShowInvocation gives them, reading only their records (the whole list
// only for a queued one's place): what a host's `host-serve status`
// answers of its own agents, without the forecast it does not send.
func (a *Reader) Statuses(ctx context.Context, ids []string) map[string]*InvocationView {
	out := map[string]*InvocationView{}
	archivedWT := map[string]bool{}
	var places map[string]int
	for _, id := range ids {
		if !store.ValidID(id) {
			continue
		}
		rec, err := a.Store.ReadInvocation(id)
		if err != nil || rec.InvocationID != id {
			continue
		}

		rec = a.Host.View(ctx, rec)
		v := &InvocationView{Record: rec, ID: id, Dir: a.Store.InvocationDir(id)}
		out[id] = v
		if rec.Queued() {
			if places == nil {
				list, _ := a.scan()
				places = a.Host.QueuePlaces(list)
			}
			v.QueuePlace = places[id]
			a.withLive(v)
			continue
		}

		v.LastOutput = a.lastOutput(rec)
		a.withLive(v)
		v.Display = a.Land.LandDisplay(ctx, rec, v.Display)
		archived, ok := archivedWT[rec.IntegrationWorktreeID]
		if !ok {
			wt, err := a.Store.ReadWorktree(rec.IntegrationWorktreeID)
			archived = err == nil && wt.State == store.StateArchived
			archivedWT[rec.IntegrationWorktreeID] = archived
		}
		worktreeRemoved(v, archived)
	}

	return out
}
