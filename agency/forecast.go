package agency

import (
	"context"
	"path"
	"sort"

	"github.com/git-agency/git-agency/errs"
	"github.com/git-agency/git-agency/gitcore"
	"github.com/git-agency/git-agency/store"
)

// ConflictsIntegration is the partner named in conflicts_with when an
// invocation conflicts with its integration branch itself.
const ConflictsIntegration = "integration"

// Forecast is what landing a pending invocation would do, computed with
// `git merge-tree --write-tree` (Replay) in the object database only.
type Forecast struct {
	// LandsCleanly: it lands cleanly on the integration branch's HEAD now.
	LandsCleanly bool `json:"lands_cleanly"`
	// ConflictsWith names what it would conflict with: "integration" (the
	// branch as it is), or the ids of the worktree's other pending
	// invocations it conflicts with when landed after them.
	ConflictsWith []string `json:"conflicts_with"`
	// ConflictFiles are the files of all those conflicts.
	ConflictFiles []string `json:"conflict_files"`
	// Refused is the error code land refuses it with (a denylisted or
	// nested repository in the sandbox, its HEAD astray); LandsCleanly is
	// then false.
	Refused string `json:"land_refused,omitempty"`
}

// Pending reports whether an invocation waits to be landed or discarded:
// ended, landing pending, no land in flight.
func Pending(r *store.InvocationRecord) bool {
	return r != nil && !Active(r) && r.Status != store.StatusQueued &&
		store.Deref(r.LandingStatus) == store.LandingPending && (r.Land == nil || r.Land.State != LandInProgress)
}

// Forecasts returns the forecast of every pending invocation among recs,
// by id. Each worktree's results are cached (forecast.json) by the
// integration tip, the sandbox tips and a fingerprint of each sandbox's
// uncommitted work (its latest checkpoint and its index), so a read with
// nothing changed runs one `git for-each-ref` and nothing else. It never
// takes the lock and never fails: an invocation it cannot judge has none.
func (a *App) Forecasts(ctx context.Context, recs []*store.InvocationRecord) map[string]*Forecast {
	out, _ := a.forecasts(ctx, recs)
	return out
}

// forecasts is Forecasts, and for the pending invocations land would not
// take as they are, what to display instead of "ready to land" (see
// landHold), cached with the forecast.
func (a *App) forecasts(ctx context.Context, recs []*store.InvocationRecord) (map[string]*Forecast, map[string]string) {
	byWT := map[string][]*store.InvocationRecord{}
	for _, r := range recs {
		if Pending(r) {
			byWT[r.IntegrationWorktreeID] = append(byWT[r.IntegrationWorktreeID], r)
		}
	}
	if len(byWT) == 0 {
		return nil, nil
	}
	wts := map[string]*store.WorktreeRecord{}
	var refs []string
	for id, list := range byWT {
		wt, err := a.Store.ReadWorktree(id)
		if err != nil || wt.State != store.StatePresent {
			continue
		}
		wts[id] = wt
		refs = append(refs, "refs/heads/"+wt.Branch)
		for _, r := range list {
			refs = append(refs, "refs/heads/"+r.SandboxBranch)
		}
	}
	tips, err := a.Repo.RefTips(ctx, refs...)
	if err != nil {
		return nil, nil
	}
	out, holds := map[string]*Forecast{}, map[string]string{}
	for id, wt := range wts {
		head := tips["refs/heads/"+wt.Branch]
		if head == "" {
			continue
		}
		a.forecastWorktree(ctx, id, head, byWT[id], tips, out, holds)
	}
	return out, holds
}

// forecastWorktree fills out for one worktree's pending invocations.
func (a *App) forecastWorktree(ctx context.Context, wtID, head string, list []*store.InvocationRecord, tips map[string]string, out map[string]*Forecast, holds map[string]string) {
	cache := a.Store.ReadForecast(wtID)
	changed := false
	if cache.Head != head {
		cache = &store.ForecastCache{Head: head, Invocations: map[string]store.ForecastEntry{}, Pairs: map[string]store.ForecastPair{}}
		changed = true
	}
	sort.Slice(list, func(i, j int) bool { return list[i].InvocationID < list[j].InvocationID })
	works := map[string]*landWork{}
	refused := map[string]string{}
	work := func(r *store.InvocationRecord) *landWork {
		if w, ok := works[r.InvocationID]; ok {
			return w
		}
		w, err := a.landWork(ctx, r, tips["refs/heads/"+r.SandboxBranch], true, true)
		if err != nil {
			w = nil
			if c := errs.As(err).Code; landRefusal(c) {
				refused[r.InvocationID] = string(c)
			}
		}
		works[r.InvocationID] = w
		return w
	}
	keep := map[string]bool{}
	var live []*store.InvocationRecord
	for _, r := range list {
		tip := tips["refs/heads/"+r.SandboxBranch]
		if tip == "" {
			continue
		}
		inv := r.InvocationID
		keep[inv] = true
		key := tip + " " + a.uncommittedStamp(r)
		e, ok := cache.Invocations[inv]
		if !ok || e.Key != key {
			e = a.forecastAlone(ctx, head, key, work(r))
			e.Refused = refused[inv]
			e.Display = a.landHold(ctx, r, tip)
			cache.Invocations[inv] = e
			changed = true
		}
		if e.Display != "" {
			holds[inv] = e.Display
		}
		if e.Refused != "" {
			out[inv] = &Forecast{ConflictsWith: []string{}, ConflictFiles: []string{}, Refused: e.Refused}
		}
		if !e.Nothing {
			live = append(live, r)
		}
	}
	for _, b := range live {
		eb := cache.Invocations[b.InvocationID]
		f := &Forecast{LandsCleanly: eb.Clean, ConflictsWith: []string{}, ConflictFiles: []string{}}
		files := map[string]bool{}
		if !eb.Clean {
			f.ConflictsWith = append(f.ConflictsWith, ConflictsIntegration)
			for _, p := range eb.Files {
				files[p] = true
			}
		} else {
			for _, x := range live {
				ex := cache.Invocations[x.InvocationID]
				if x == b || !ex.Clean || !overlaps(ex.Paths, eb.Paths) {
					continue
				}
				pk, key := x.InvocationID+">"+b.InvocationID, ex.Key+"|"+eb.Key
				p, ok := cache.Pairs[pk]
				if !ok || p.Key != key {
					p = a.forecastAfter(ctx, key, ex.Result, work(b))
					cache.Pairs[pk] = p
					changed = true
				}
				keep[pk] = true
				if p.Conflict {
					f.ConflictsWith = append(f.ConflictsWith, x.InvocationID)
					for _, p := range p.Files {
						files[p] = true
					}
				}
			}
		}
		for p := range files {
			f.ConflictFiles = append(f.ConflictFiles, p)
		}
		sort.Strings(f.ConflictFiles)
		out[b.InvocationID] = f
	}
	for k := range cache.Invocations {
		if !keep[k] {
			delete(cache.Invocations, k)
			changed = true
		}
	}
	for k := range cache.Pairs {
		if !keep[k] {
			delete(cache.Pairs, k)
			changed = true
		}
	}
	if changed {
		a.Store.WriteForecast(wtID, cache)
	}
}

// uncommittedStamp fingerprints a sandbox's uncommitted work without
// running git: its newest checkpoint (the supervisor takes one when the
// agent ends) and its index file. "" when the sandbox tree is gone.
func (a *App) uncommittedStamp(r *store.InvocationRecord) string {
	tree := a.sandboxTree(r)
	if tree == "" {
		return ""
	}
	cp := ""
	if f, err := a.Store.ReadCheckpoints(r.InvocationID); err == nil && len(f.Checkpoints) > 0 {
		cp = f.Checkpoints[len(f.Checkpoints)-1].SnapshotCommit
	}
	return cp + " " + gitcore.IndexStamp(tree)
}

// landRefusal reports whether c is a refusal of landWork that holds until
// the sandbox changes (so the forecast may cache it), as opposed to git
// failing.
func landRefusal(c errs.Code) bool {
	switch c {
	case errs.EDenylisted, errs.ENestedRepo, errs.EUnlandedChanges:
		return true
	}
	return false
}

// forecastAlone lands w alone on head (as land --check --apply would).
func (a *App) forecastAlone(ctx context.Context, head, key string, w *landWork) store.ForecastEntry {
	e := store.ForecastEntry{Key: key}
	if w == nil || len(w.Commits) == 0 {
		e.Nothing = true
		return e
	}
	rp, err := a.Repo.Replay(ctx, head, w.Commits, gitcore.Writer{})
	if err != nil {
		e.Nothing = true
		return e
	}
	if rp.Conflict != nil {
		e.Files = rp.Conflict.Files
	} else {
		e.Clean, e.Result = true, rp.Tip
	}
	last := w.Commits[len(w.Commits)-1].ID
	base := w.Commits[0].ID + "^"
	if len(w.Commits[0].Parents) > 0 {
		base = w.Commits[0].Parents[0]
	}
	e.Paths, _ = a.Repo.DiffNames(ctx, base, last)
	return e
}

// forecastAfter lands w on onto, another invocation's replayed result.
func (a *App) forecastAfter(ctx context.Context, key, onto string, w *landWork) store.ForecastPair {
	p := store.ForecastPair{Key: key}
	if w == nil || len(w.Commits) == 0 {
		return p
	}
	rp, err := a.Repo.Replay(ctx, onto, w.Commits, gitcore.Writer{})
	if err == nil && rp.Conflict != nil {
		p.Conflict, p.Files = true, rp.Conflict.Files
	}
	return p
}

// overlaps reports whether two sets of changed paths touch a common path
// (or a file and a directory holding the other): only then can landing one
// after the other conflict where landing either alone does not.
func overlaps(xs, ys []string) bool {
	if len(xs) == 0 || len(ys) == 0 {
		return false
	}
	set := map[string]bool{}
	for _, p := range xs {
		for ; p != "." && p != "/" && p != ""; p = path.Dir(p) {
			set[p] = true
		}
	}
	exact := map[string]bool{}
	for _, p := range xs {
		exact[p] = true
	}
	for _, q := range ys {
		if set[q] {
			return true // q is one of xs or a directory above one
		}
		for d := path.Dir(q); d != "." && d != "/" && d != ""; d = path.Dir(d) {
			if exact[d] {
				return true // a file of xs where q needs a directory
			}
		}
	}
	return false
}
