package view

import (
	"context"
	"github.com/git-agency/git-agency/agency/internal/core"
	"path"
	"slices"
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

// Forecasts returns the forecast of every pending invocation among recs,
// by id. Each worktree's results are cached (forecast.json) by the
// integration tip, the sandbox tips and a fingerprint of each sandbox's
// uncommitted work (its latest checkpoint and its index), so a read with
// nothing changed runs one `git for-each-ref` and nothing else. It never
// takes the lock and never fails: an invocation it cannot judge has none.
func (a *Reader) Forecasts(ctx context.Context, recs []*store.InvocationRecord) map[string]*Forecast {
	return a.forecasts(ctx, recs, false).out
}

// forecastRun is what forecasts found: each pending invocation's
// forecast (out), for those land would not take as they are what to
// display instead of "ready to land" (holds: see landHold, cached with the
// forecast), and when asked, whether each integration worktree with a
// pending invocation has uncommitted changes (dirty: IntegrationDirty).
type forecastRun struct {
	out   map[string]*Forecast
	holds map[string]string
	dirty map[string]bool
}

// forecasts is Forecasts with what else forecastRun holds; withDirty asks
// for dirty, each worktree's checked beside its merges.
func (a *Reader) forecasts(ctx context.Context, recs []*store.InvocationRecord, withDirty bool) forecastRun {
	byWT := map[string][]*store.InvocationRecord{}
	for _, r := range recs {
		if r.Pending() {
			byWT[r.IntegrationWorktreeID] = append(byWT[r.IntegrationWorktreeID], r)
		}
	}
	if len(byWT) == 0 {
		return forecastRun{}
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
	tips, ok := a.Repo.RefTipsFromFiles(refs...)
	if !ok {
		var err error
		if tips, err = a.Repo.RefTips(ctx, refs...); err != nil {
			return forecastRun{}
		}
	}
	run := forecastRun{out: map[string]*Forecast{}, holds: map[string]string{}}
	if withDirty {
		run.dirty = map[string]bool{}
	}
	for id, wt := range wts {
		head := tips["refs/heads/"+wt.Branch]
		if head == "" {
			continue
		}
		a.forecastWorktree(ctx, id, wt, head, byWT[id], tips, run)
	}
	return run
}

// forecastWorktree fills run for one worktree's pending invocations. What
// each would land is computed only when its sandbox changed (forecastWork);
// when the integration branch moved, only the merges against the new tip
// run again, one per commit, several at once. The worktree's dirty check,
// when asked, runs beside them: it needs only the tip and its tree.
func (a *Reader) forecastWorktree(ctx context.Context, wtID string, wt *store.WorktreeRecord, head string, list []*store.InvocationRecord, tips map[string]string, run forecastRun) {
	cache, changed := a.forecastCache(ctx, wtID, head)
	if run.dirty != nil {
		dirty := a.Land.StartDirtyCheck(ctx, wt.TreePath, cache.Head, cache.HeadTree)
		defer func() { run.dirty[wtID] = dirty() }()
	}
	sort.Slice(list, func(i, j int) bool { return list[i].InvocationID < list[j].InvocationID })
	keep := map[string]bool{}
	if a.refreshWork(ctx, cache, list, tips, keep) {
		changed = true
	}
	live := liveWork(cache, list, keep, run)
	if a.refreshAlone(ctx, cache, live) {
		changed = true
	}
	for _, b := range live {
		f, c := a.forecastOf(ctx, cache, b, live, keep)
		changed = changed || c
		run.out[b.InvocationID] = f
	}
	if pruneForecast(cache, keep) || changed {
		// A cache: when it cannot be written, the next read computes again.
		_ = a.Store.WriteForecast(wtID, cache)
	}
}

// forecastCache is the worktree's forecast cache for the integration tip
// head (moved to it, its tree looked up) and whether that changed it.
func (a *Reader) forecastCache(ctx context.Context, wtID, head string) (*store.ForecastCache, bool) {
	cache := a.Store.ReadForecast(wtID)
	changed := false
	if cache.Head != head {
		a.MoveHead(cache, head)
		changed = true
	}
	if a.lookUpHeadTree(ctx, cache) {
		changed = true
	}
	return cache, changed
}

// liveWork are the invocations of list (those keep names, with their work
// in the cache) that have something to land; it records in run the hold
// and the refusal each has.
func liveWork(cache *store.ForecastCache, list []*store.InvocationRecord, keep map[string]bool, run forecastRun) []*store.InvocationRecord {
	var live []*store.InvocationRecord
	for _, r := range list {
		w, ok := cache.Work[r.InvocationID]
		if !keep[r.InvocationID] || !ok {
			continue
		}
		if w.Display != "" {
			run.holds[r.InvocationID] = w.Display
		}
		if w.Refused != "" {
			run.out[r.InvocationID] = &Forecast{ConflictsWith: []string{}, ConflictFiles: []string{}, Refused: w.Refused}
		}
		if !w.Nothing {
			live = append(live, r)
		}
	}
	return live
}

// lookUpHeadTree fills the cache's HeadTree when it lacks it, and reports
// whether it did. A commit's tree never changes: it is looked up once per
// tip, for the merges and for IntegrationDirty.
func (a *Reader) lookUpHeadTree(ctx context.Context, cache *store.ForecastCache) bool {
	if cache.HeadTree != "" {
		return false
	}
	if t, _, ok := a.Repo.CommitFromFiles(cache.Head); ok {
		cache.HeadTree = t
		return true
	}
	t, err := a.Repo.TreeOf(ctx, cache.Head)
	if err != nil {
		return false
	}
	cache.HeadTree = t
	return true
}

// MoveHead empties the cache's merges for a new integration tip. What is
// an ancestor of the old tip is one of the new tip when the new one is
// made on the old (a commit, a land's fast-forward), so InHead keeps those
// (the new commit read from its loose object file; else it is asked
// again), and its tree when git wrote it there.
func (a *Reader) MoveHead(cache *store.ForecastCache, head string) {
	old, known := cache.Head, cache.InHead
	cache.Head, cache.HeadTree, cache.InHead = head, "", map[string]bool{}
	cache.Invocations = map[string]store.ForecastEntry{}
	cache.Pairs = map[string]store.ForecastPair{}
	tree, parents, ok := a.Repo.CommitFromFiles(head)
	if !ok || old == "" || !slices.Contains(parents, old) {
		return
	}
	cache.HeadTree = tree
	cache.InHead[old] = true
	for p, in := range known {
		if in {
			cache.InHead[p] = true
		}
	}
}

// refreshWork computes, several at once, what each invocation of list
// whose sandbox changed since the cache was written would land, and marks
// in keep every invocation that has a sandbox branch. It reports whether
// the cache changed.
func (a *Reader) refreshWork(ctx context.Context, cache *store.ForecastCache, list []*store.InvocationRecord, tips map[string]string, keep map[string]bool) bool {
	var stale []*store.InvocationRecord
	keys := map[string]string{}
	for _, r := range list {
		tip := tips["refs/heads/"+r.SandboxBranch]
		if tip == "" {
			continue
		}
		keep[r.InvocationID] = true
		keys[r.InvocationID] = tip + " " + a.uncommittedStamp(r)
		if w, ok := cache.Work[r.InvocationID]; !ok || w.Key != keys[r.InvocationID] {
			stale = append(stale, r)
		}
	}
	works := make([]store.ForecastWork, len(stale))
	core.EachParallel(len(stale), func(i int) {
		r := stale[i]
		works[i] = a.forecastWork(ctx, r, tips["refs/heads/"+r.SandboxBranch], keys[r.InvocationID])
	})
	for i, r := range stale {
		cache.Work[r.InvocationID] = works[i]
		delete(cache.Invocations, r.InvocationID)
	}
	return len(stale) > 0
}

// refreshAlone merges, several at once, each live invocation whose entry
// is missing or stale onto the cache's head. It reports whether the cache
// changed.
func (a *Reader) refreshAlone(ctx context.Context, cache *store.ForecastCache, live []*store.InvocationRecord) bool {
	var todo []string
	for _, r := range live {
		if e, ok := cache.Invocations[r.InvocationID]; !ok || e.Key != cache.Work[r.InvocationID].Key {
			todo = append(todo, r.InvocationID)
		}
	}
	if len(todo) == 0 {
		return false
	}
	head, headTree := cache.Head, cache.HeadTree
	if headTree == "" {
		return false
	}
	inHead := a.parentsInHead(ctx, head, cache, todo)
	entries := make([]store.ForecastEntry, len(todo))
	ok := make([]bool, len(todo))
	core.EachParallel(len(todo), func(i int) {
		w := cache.Work[todo[i]]
		entries[i], ok[i] = a.forecastAlone(ctx, head, headTree, w, inHead[firstParent(w)])
	})
	for i, inv := range todo {
		if ok[i] {
			cache.Invocations[inv] = entries[i]
		} else {
			delete(cache.Work, inv) // judged again by the next read
		}
	}
	return true
}

// parentsInHead reports, for the first parent of each of the invocations'
// commits, whether it is an ancestor of head: one git call per distinct
// parent (a worktree's sandboxes mostly share theirs).
func (a *Reader) parentsInHead(ctx context.Context, head string, cache *store.ForecastCache, invs []string) map[string]bool {
	if cache.InHead == nil {
		cache.InHead = map[string]bool{}
	}
	for _, inv := range invs {
		p := firstParent(cache.Work[inv])
		if _, done := cache.InHead[p]; done || p == "" {
			continue
		}
		ok, err := a.Repo.IsAncestor(ctx, p, head)
		if err != nil {
			continue // asked again next time
		}
		cache.InHead[p] = ok
	}
	return cache.InHead
}

// firstParent is the parent of the first commit w would replay.
func firstParent(w store.ForecastWork) string {
	if len(w.Commits) == 0 {
		return ""
	}
	return w.Commits[0].Parent
}

// forecastOf is b's forecast: landed alone, and (when that is clean)
// after each other live invocation that touches a path it touches. It
// reports whether the cache changed.
func (a *Reader) forecastOf(ctx context.Context, cache *store.ForecastCache, b *store.InvocationRecord, live []*store.InvocationRecord, keep map[string]bool) (*Forecast, bool) {
	changed := false
	eb := cache.Invocations[b.InvocationID]
	wb := cache.Work[b.InvocationID]
	f := &Forecast{LandsCleanly: eb.Clean, ConflictsWith: []string{}, ConflictFiles: []string{}}
	files := map[string]bool{}
	if !eb.Clean {
		f.ConflictsWith = append(f.ConflictsWith, ConflictsIntegration)
		for _, p := range eb.Files {
			files[p] = true
		}
	}
	for _, x := range live {
		ex, okx := cache.Invocations[x.InvocationID]
		wx := cache.Work[x.InvocationID]
		if !eb.Clean || x == b || !okx || !ex.Clean || !overlaps(wx.Paths, wb.Paths) {
			continue
		}
		pk, key := x.InvocationID+">"+b.InvocationID, ex.Key+"|"+eb.Key
		p, ok := cache.Pairs[pk]
		if !ok || p.Key != key {
			p = a.forecastAfter(ctx, cache, x.InvocationID, key, wb)
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
	for p := range files {
		f.ConflictFiles = append(f.ConflictFiles, p)
	}
	sort.Strings(f.ConflictFiles)
	return f, changed
}

// pruneForecast drops what keep does not name; it reports whether
// anything went.
func pruneForecast(cache *store.ForecastCache, keep map[string]bool) bool {
	changed := false
	for k := range cache.Work {
		if !keep[k] {
			delete(cache.Work, k)
			delete(cache.Invocations, k)
			changed = true
		}
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
	return changed
}

// uncommittedStamp fingerprints a sandbox's uncommitted work without
// running git: its newest checkpoint (the supervisor takes one when the
// agent ends) and its index file. "" when the sandbox tree is gone.
func (a *Reader) uncommittedStamp(r *store.InvocationRecord) string {
	tree := a.SandboxTree(r)
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

// forecastWork is what landing r (whose sandbox branch is at tip) would
// replay, as land --check --apply builds it, whatever the integration tip.
func (a *Reader) forecastWork(ctx context.Context, r *store.InvocationRecord, tip, key string) store.ForecastWork {
	w := store.ForecastWork{Key: key, Display: a.Land.LandHold(ctx, r, tip)}
	lw, err := a.Land.Work(ctx, r, tip, true, true)
	if err != nil {
		if c := errs.As(err).Code; landRefusal(c) {
			w.Refused = string(c)
		}
	}
	if lw == nil || len(lw.Commits) == 0 {
		w.Nothing = true
		return w
	}
	first, last := lw.Commits[0], lw.Commits[len(lw.Commits)-1].ID
	base, baseTree := first.ID+"^", ""
	if len(first.Parents) > 0 {
		base = first.Parents[0]
		if baseTree, err = a.Repo.TreeOf(ctx, base); err != nil {
			w.Nothing = true
			return w
		}
	}
	for _, c := range gitcore.PickCommits(lw.Commits, baseTree) {
		w.Commits = append(w.Commits, store.ForecastCommit(c))
	}
	w.Paths, _ = a.Repo.DiffNames(ctx, base, last)
	return w
}

// pickCommits are w's commits as gitcore replays them.
func pickCommits(w store.ForecastWork) []gitcore.PickCommit {
	out := make([]gitcore.PickCommit, len(w.Commits))
	for i, c := range w.Commits {
		out[i] = gitcore.PickCommit(c)
	}
	return out
}

// forecastAlone lands w alone on head (as land --check --apply would);
// false when git could not tell (an object of w is gone: w is stale).
func (a *Reader) forecastAlone(ctx context.Context, head, headTree string, w store.ForecastWork, baseInHead bool) (store.ForecastEntry, bool) {
	e := store.ForecastEntry{Key: w.Key}
	tree, conflict, err := a.Repo.ReplayTree(ctx, head, headTree, pickCommits(w), baseInHead)
	if err != nil {
		return e, false
	}
	if conflict != nil {
		e.Files = conflict.Files
	} else {
		e.Clean, e.Tree = true, tree
	}
	return e, true
}

// forecastAfter lands wb on x's replayed result (committed on the cache's
// head the first time a pair needs it).
func (a *Reader) forecastAfter(ctx context.Context, cache *store.ForecastCache, x, key string, wb store.ForecastWork) store.ForecastPair {
	p := store.ForecastPair{Key: key}
	ex := cache.Invocations[x]
	if ex.Result == "" {
		id, err := a.Repo.WriteCommit(ctx, ex.Tree, []string{cache.Head}, "agency: forecast\n", nil, gitcore.Writer{})
		if err != nil {
			return p
		}
		ex.Result = id
		cache.Invocations[x] = ex
	}
	_, conflict, err := a.Repo.ReplayTree(ctx, ex.Result, ex.Tree, pickCommits(wb), false)
	if err == nil && conflict != nil {
		p.Conflict, p.Files = true, conflict.Files
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
