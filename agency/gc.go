package agency

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/git-agency/git-agency/errs"
	"github.com/git-agency/git-agency/gitcore"
	"github.com/git-agency/git-agency/store"
)

// GCOptions are the inputs of `gc`.
type GCOptions struct {
	DryRun bool
	// OlderThan: branches and snapshot refs of invocations landed or
	// discarded longer ago than this are deleted (when safe).
	OlderThan time.Duration
	// IncludePending also removes the sandbox trees of finished invocations
	// that were never landed or discarded (their branches are kept).
	IncludePending bool
	// Force removes trees with uncommitted work and refs whose commits are
	// on no other branch.
	Force bool
	// Progress, when set, is told of every item as soon as it is decided.
	Progress func(GCStep)
}

// GC progress phases.
const (
	GCDecided = "decided" // planned: to be removed, or kept (Item.Kept)
	GCDone    = "done"    // GC handled it: removed, kept after all, or failed
)

// GCStep is one step of gc's progress, for a front end that shows it as it
// goes (a large repository's gc takes minutes).
type GCStep struct {
	Phase string
	Item  GCItem
	// Done and Total count the items GC handles (those not kept by the
	// plan); BytesFreed is what it freed so far.
	Done, Total int
	BytesFreed  int64
}

// GC item kinds.
const (
	GCSandboxTree   = "sandbox_tree"   // the tree of a known invocation
	GCOrphanDir     = "orphan_sandbox" // sandboxes/<id> without a record
	GCRegistration  = "registration"   // a git worktree registration whose directory is gone
	GCTmuxSession   = "tmux_session"
	GCBranch        = "branch"
	GCSnapshotRef   = "snapshot_ref"
	GCKeptRef       = "kept_ref"       // refs/agency/kept/<inv>/…: commits a discard saved
	GCTempFile      = "temp_file"      // a record write's or a snapshot's temp file, cut short
	GCInvocationDir = "invocation_dir" // invocations/<id>/ without meta.json
	GCWorktreeDir   = "worktree_dir"   // integration_worktrees/<id>/ without meta.json
)

// GCItem is one thing gc removes, or keeps and says why.
type GCItem struct {
	Kind       string `json:"kind"`
	Invocation string `json:"invocation_id,omitempty"`
	Target     string `json:"target"` // a path, a ref or a session name
	Bytes      int64  `json:"bytes"`
	Reason     string `json:"reason"`
	// Kept is set (with why) when gc leaves the item alone.
	Kept    bool   `json:"kept,omitempty"`
	KeptWhy string `json:"kept_why,omitempty"`
	Removed bool   `json:"removed"`
	Error   string `json:"error,omitempty"`
	tree    string // the sandbox tree to look at before removing
	admin   string // admin dir of a registration
	forced  bool   // planned with --force: no re-check of the tree's work
	// orphanOf: a branch planned because this record file is missing; it
	// is left alone if the file appeared since.
	orphanOf string
	// checkedOut: the worktree that has the branch checked out.
	checkedOut string
}

// GCResult is gc's report.
type GCResult struct {
	DryRun     bool     `json:"dry_run"`
	Items      []GCItem `json:"items"`
	BytesFreed int64    `json:"bytes_freed"`
}

// GCPlan finds what gc would remove (and what it keeps, and why). It
// changes nothing.
func (a *App) GCPlan(ctx context.Context, opts GCOptions) (*GCResult, error) {
	p := &gcPlanner{a: a, ctx: ctx, opts: opts, res: &GCResult{DryRun: true}, progress: opts.Progress}
	if p.progress == nil {
		p.progress = func(GCStep) {}
	}
	if err := p.scanRecords(); err != nil {
		return nil, err
	}
	p.planLeftovers()
	p.planSandboxTrees()
	p.planRegistrations()
	p.planTmuxSessions()
	p.flush()
	p.planOrphanBranches()
	p.planOldRefs()
	return p.res, nil
}

// gcPlanner is one GCPlan: what it has scanned and what it has decided.
type gcPlanner struct {
	a        *App
	ctx      context.Context
	opts     GCOptions
	res      *GCResult
	progress func(GCStep)
	// decided: res.Items[:decided] have been reported. Sandbox trees wait
	// for one reachability walk over all their HEADs (see decideTrees).
	decided int
	invs    []store.InvocationEntry
	records map[string]*store.InvocationRecord
	broken  map[string]bool
	left    []Leftover
	// treeGoes[id]: the sandbox tree of id is gone or will be removed (its
	// branch cannot be deleted while a tree has it checked out).
	treeGoes map[string]bool
}

func (p *gcPlanner) add(it GCItem) { p.res.Items = append(p.res.Items, it) }

// flush reports the items decided since the last flush.
func (p *gcPlanner) flush() {
	for ; p.decided < len(p.res.Items); p.decided++ {
		p.progress(GCStep{Phase: GCDecided, Item: p.res.Items[p.decided]})
	}
}

// scanRecords reads the invocation records (reconciled); a broken one is
// left to doctor, one without meta.json is a killed start's leftover.
func (p *gcPlanner) scanRecords() error {
	invs, err := p.a.Store.ScanInvocations()
	if err != nil {
		return errs.IO("scan", p.a.Store.InvocationsDir(), err)
	}
	p.invs, p.records, p.broken = invs, map[string]*store.InvocationRecord{}, map[string]bool{}
	for _, e := range invs {
		if e.Broken {
			// Without meta.json it is a killed start's leftover (see
			// leftovers), and its sandbox an orphan.
			if !os.IsNotExist(e.Err) {
				p.broken[e.ID] = true
			}
			continue
		}
		p.records[e.ID] = p.a.Reconcile(p.ctx, e.Record)
	}
	return nil
}

// planLeftovers: what killed writers left (see leftovers).
func (p *gcPlanner) planLeftovers() {
	p.left = p.a.leftovers()
	for _, l := range p.left {
		it := GCItem{Kind: l.Kind, Invocation: l.Invocation, Target: l.Path, Bytes: l.Bytes, Reason: l.Reason}
		if l.Kind == GCWorktreeDir {
			it.forced = p.opts.Force
			p.a.keepIfDirty(p.ctx, &it, p.a.Store.IntegrationWorktreeTreePath(l.Invocation), p.opts.Force)
		}
		p.add(it)
	}
	p.flush()
}

// planSandboxTrees: sandbox trees of landed or discarded invocations (and
// with --include-pending of finished ones), and orphaned sandbox
// directories; each tree is looked at before it may go.
func (p *gcPlanner) planSandboxTrees() {
	p.treeGoes = map[string]bool{}
	var trees []int // indexes into res.Items
	sbs, _ := store.ReadDirNames(p.a.Store.SandboxesDir())
	for _, id := range sbs {
		it, ok := p.sandboxTreeItem(id)
		if ok {
			p.add(it)
			trees = append(trees, len(p.res.Items)-1)
		}
	}
	p.a.decideTrees(p.ctx, p.res.Items, trees, true)
	for _, i := range trees {
		it := &p.res.Items[i]
		if it.Kind == GCSandboxTree {
			p.treeGoes[it.Invocation] = !it.Kept
		}
	}
	p.flush()
}

// sandboxTreeItem is the item for sandbox id, if gc may remove it.
func (p *gcPlanner) sandboxTreeItem(id string) (GCItem, bool) {
	tree := p.a.Store.SandboxTreePath(id)
	if p.broken[id] {
		return GCItem{}, false // doctor reports it; its record needs a person
	}
	r := p.records[id]
	if r == nil {
		return GCItem{Kind: GCOrphanDir, Invocation: id, Target: p.a.Store.SandboxDir(id),
			Reason: "no invocation record", tree: tree, forced: p.opts.Force}, true
	}
	if _, err := os.Stat(tree); err != nil {
		p.treeGoes[id] = true
		return GCItem{}, false
	}
	if Active(r) || Queued(r) {
		return GCItem{}, false // a queued sandbox waits for its agent
	}
	it := GCItem{Kind: GCSandboxTree, Invocation: id, Target: tree, tree: tree, forced: p.opts.Force}
	switch landing := store.Deref(r.LandingStatus); landing {
	case store.LandingLanded, store.LandingDiscarded:
		it.Reason = landing + "; its tree was left behind"
	default:
		if !p.opts.IncludePending {
			return GCItem{}, false
		}
		it.Reason = "finished, not landed (--include-pending; branch " + store.SandboxBranch(id) + " is kept)"
	}
	return it, true
}

// planRegistrations: stale git worktree registrations inside our data
// directory.
func (p *gcPlanner) planRegistrations() {
	regs, err := p.a.Repo.AdminWorktrees()
	if err != nil {
		return
	}
	for _, w := range regs {
		if !inside(p.a.Store.RepoDir(), w.Path) {
			continue
		}
		if _, err := os.Stat(w.Path); !os.IsNotExist(err) {
			continue
		}
		it := GCItem{Kind: GCRegistration, Target: w.Path, Reason: "its directory is gone", admin: w.AdminDir}
		if w.Locked {
			it.Kept, it.KeptWhy = true, "locked ('git worktree unlock' it first)"
		}
		p.add(it)
	}
}

// planTmuxSessions: this repository's tmux sessions without a running
// record.
func (p *gcPlanner) planTmuxSessions() {
	for _, s := range tmuxSessions(p.ctx) {
		id := strings.TrimPrefix(s, "agency-")
		r, ok := p.records[id]
		if ok && Active(r) {
			continue
		}
		if !ok && (p.broken[id] || !p.a.sessionIsOurs(p.ctx, s)) {
			continue
		}
		p.add(GCItem{Kind: GCTmuxSession, Invocation: id, Target: s, Reason: "no running invocation"})
	}
}

// planOrphanBranches: branches a killed worktree create or agent start
// left behind. A branch stays while a tree that stays has it checked out.
func (p *gcPlanner) planOrphanBranches() {
	known := func(id string) bool { _, ok := p.records[id]; return ok || p.broken[id] }
	for _, o := range p.a.orphanBranches(p.ctx, p.left, known) {
		it := GCItem{Kind: GCBranch, Invocation: o.ID, Target: o.Name, Reason: o.Reason, orphanOf: o.MetaPath, checkedOut: o.CheckedOut}
		if !o.Elsewhere && !p.opts.Force {
			it.Kept, it.KeptWhy = true, "its commits are on no other branch (--force deletes it)"
		}
		p.add(it)
	}
	for i := range p.res.Items {
		it := &p.res.Items[i]
		if it.Kind != GCBranch || it.checkedOut == "" || it.Kept {
			continue
		}
		if !p.treeGoesWith(it.checkedOut) {
			it.Kept, it.KeptWhy = true, "checked out in "+it.checkedOut
		}
	}
}

// treeGoesWith tells whether a directory gc removes holds path.
func (p *gcPlanner) treeGoesWith(path string) bool {
	for _, o := range p.res.Items {
		if (o.Kind == GCOrphanDir || o.Kind == GCWorktreeDir || o.Kind == GCSandboxTree) && !o.Kept && inside(o.Target, path) {
			return true
		}
	}
	return false
}

// planOldRefs: branches, snapshot refs and kept refs of invocations landed
// or discarded longer than OlderThan ago, from one listing of each
// namespace (not two git calls per record).
func (p *gcPlanner) planOldRefs() {
	branches := map[string]bool{}
	if refs, err := p.a.Repo.ForEachRef(p.ctx, "refs/heads/agency/"); err == nil {
		for _, r := range refs {
			branches[r.Name] = true
		}
	}
	snapshots := map[string][]gitcore.Ref{}
	const snapshotsNS = "refs/agency/snapshots/"
	if refs, err := p.a.Repo.ForEachRef(p.ctx, snapshotsNS); err == nil {
		for _, r := range refs {
			inv, _, _ := strings.Cut(strings.TrimPrefix(r.Name, snapshotsNS), "/")
			snapshots[inv] = append(snapshots[inv], r)
		}
	}
	cutoff := p.a.Now().Add(-p.opts.OlderThan)
	for _, e := range p.invs {
		r := p.records[e.ID]
		if r == nil || Active(r) {
			continue
		}
		landing := store.Deref(r.LandingStatus)
		if landing != store.LandingLanded && landing != store.LandingDiscarded {
			continue
		}
		when := firstTime(r.LandedAt, r.DiscardedAt, r.FinishedAt, &r.StartedAt)
		if when.IsZero() || when.After(cutoff) {
			continue
		}
		age := fmt.Sprintf("%s %s ago", landing, roundAge(p.a.Now().Sub(when)))
		p.planBranch(r, branches, age)
		p.planSnapshotRefs(r, snapshots[r.InvocationID], landing, age)
		p.planKeptRefs(r, landing, when)
		p.flush()
	}
}

// planBranch: an old invocation's sandbox branch, kept while its tree has
// it checked out or (without --force) while its commits are nowhere else.
func (p *gcPlanner) planBranch(r *store.InvocationRecord, branches map[string]bool, age string) {
	branch := store.SandboxBranch(r.InvocationID)
	branchRef := "refs/heads/" + branch
	if !branches[branchRef] {
		return
	}
	it := GCItem{Kind: GCBranch, Invocation: r.InvocationID, Target: branch, Reason: age}
	if _, err := os.Stat(p.a.Store.SandboxTreePath(r.InvocationID)); err == nil && !p.treeGoes[r.InvocationID] {
		it.Kept, it.KeptWhy = true, "its sandbox tree still has it checked out"
	} else if safe, why := p.a.branchWorkElsewhere(p.ctx, r, branchRef); !safe && !p.opts.Force {
		it.Kept, it.KeptWhy = true, why+" (--force deletes it)"
	}
	p.add(it)
}

// planSnapshotRefs: an old invocation's checkpoint refs. Snapshot commits
// are never on a branch; those of a landed invocation are its work in
// progress: once the land is on a branch they are safe to delete.
func (p *gcPlanner) planSnapshotRefs(r *store.InvocationRecord, refs []gitcore.Ref, landing, age string) {
	branchRef := "refs/heads/" + store.SandboxBranch(r.InvocationID)
	landedSafe := false
	if landing == store.LandingLanded && len(refs) > 0 {
		landedSafe = p.a.landedWorkOnBranch(p.ctx, r, branchRef)
	}
	for _, ref := range refs {
		it := GCItem{Kind: GCSnapshotRef, Invocation: r.InvocationID, Target: ref.Name, Reason: age}
		if landedSafe {
			it.Reason += "; its landed work is on a branch"
		} else if ok, err := p.a.Repo.ReachableFromOtherBranch(p.ctx, ref.Object, branchRef); (err != nil || !ok) && !p.opts.Force {
			it.Kept, it.KeptWhy = true, "its commit is on no branch (--force deletes it)"
			if landing == store.LandingLanded {
				it.KeptWhy = "its landed work is on no branch (--force deletes it)"
			}
		}
		p.add(it)
	}
}

// planKeptRefs: the commits kept from an old invocation's sandbox
// (refs/agency/kept/<inv>/), kept themselves while on no branch.
func (p *gcPlanner) planKeptRefs(r *store.InvocationRecord, landing string, when time.Time) {
	kept, _ := p.a.Repo.ForEachRef(p.ctx, store.KeptRefPrefix(r.InvocationID))
	for _, ref := range kept {
		it := GCItem{Kind: GCKeptRef, Invocation: r.InvocationID, Target: ref.Name,
			Reason: fmt.Sprintf("commits kept from its sandbox; %s %s ago", landing, roundAge(p.a.Now().Sub(when)))}
		if ok, err := p.a.Repo.ReachableFromOtherBranch(p.ctx, ref.Object, ""); (err != nil || !ok) && !p.opts.Force {
			it.Kept, it.KeptWhy = true, "its commits are on no branch (--force deletes it)"
		}
		p.add(it)
	}
}

// branchWorkElsewhere tells whether every commit of a sandbox branch is on
// another branch, or was cherry-picked onto its integration branch.
func (a *App) branchWorkElsewhere(ctx context.Context, r *store.InvocationRecord, branchRef string) (bool, string) {
	if ok, err := a.Repo.ReachableFromOtherBranch(ctx, branchRef, branchRef); err == nil && ok {
		return true, ""
	}
	if wt, err := a.Store.ReadWorktree(r.IntegrationWorktreeID); err == nil && wt.Branch != "" {
		if ok, _ := a.Repo.BranchExists(ctx, wt.Branch); ok {
			if n, err := a.Repo.UnpickedCommits(ctx, "refs/heads/"+wt.Branch, branchRef); err == nil && n == 0 {
				return true, ""
			} else if err == nil {
				return false, fmt.Sprintf("%d commit(s) are on no other branch", n)
			}
		}
	}
	return false, "its commits are on no other branch"
}

// landedWorkOnBranch tells whether a landed invocation's work is on a
// branch other than its sandbox branch: the land's result_head is, or
// (a record without one) every commit of the sandbox branch is there or
// was cherry-picked onto the integration branch.
func (a *App) landedWorkOnBranch(ctx context.Context, r *store.InvocationRecord, branchRef string) bool {
	if r.Land != nil && r.Land.ResultHead != "" {
		ok, err := a.Repo.ReachableFromOtherBranch(ctx, r.Land.ResultHead, branchRef)
		return err == nil && ok
	}
	if ok, _ := a.Repo.BranchExists(ctx, strings.TrimPrefix(branchRef, "refs/heads/")); !ok {
		return false
	}
	ok, _ := a.branchWorkElsewhere(ctx, r, branchRef)
	return ok
}

// keepIfDirty marks an item kept when its tree holds uncommitted work
// (decideTrees for one item; its size is left as it is).
func (a *App) keepIfDirty(ctx context.Context, it *GCItem, tree string, force bool) {
	one := []GCItem{*it}
	one[0].tree, one[0].forced = tree, force
	a.decideTrees(ctx, one, []int{0}, false)
	if one[0].Kept {
		it.Kept, it.KeptWhy = true, one[0].KeptWhy
	}
}

// decideTrees marks the items (indexes into items) kept whose tree holds
// work: uncommitted changes (one `git status` each), or a HEAD with commits
// no ref has (one reachability walk for all of them). Forced items are not
// looked at. With measure, the size of an item that goes is measured then,
// and only then: measuring a tree costs a stat per file.
func (a *App) decideTrees(ctx context.Context, items []GCItem, idx []int, measure bool) {
	heads := map[int]string{}
	var commits []string
	for _, i := range idx {
		it := &items[i]
		if it.forced {
			continue
		}
		if _, err := os.Stat(it.tree); err != nil {
			continue
		}
		t := a.Repo.Tree(it.tree)
		dirty, err := t.IsDirty(ctx)
		if err != nil {
			// Not a working git tree: its files may still be someone's work.
			if hasFiles(it.tree) {
				it.Kept, it.KeptWhy = true, "its tree is not a readable git worktree (--force removes it)"
			}
			continue
		}
		if dirty {
			it.Kept, it.KeptWhy = true, "its tree has uncommitted changes (--force removes it)"
			continue
		}
		// An agent that committed on a detached HEAD (or another branch):
		// those commits live only in this tree's HEAD.
		if head, err := t.Head(ctx); err == nil && head != "" {
			heads[i] = head
			commits = append(commits, head)
		}
	}
	if unreachable, err := a.Repo.Unreachable(ctx, commits); err == nil {
		for i, head := range heads {
			if unreachable[head] {
				items[i].Kept, items[i].KeptWhy = true, "its HEAD holds commits no branch or ref has (--force removes it)"
			}
		}
	}
	for _, i := range idx {
		if it := &items[i]; measure && !it.Kept {
			it.Bytes = store.DirSize(it.Target)
		}
	}
}

// keptOnRecheck looks at an item's tree again under the lock (the plan may
// be old) and marks the item kept when it now holds work.
func (a *App) keptOnRecheck(ctx context.Context, it *GCItem, tree string) bool {
	recheck := *it
	recheck.Kept = false
	a.keepIfDirty(ctx, &recheck, tree, it.forced)
	if recheck.Kept {
		it.Kept, it.KeptWhy = true, recheck.KeptWhy
	}
	return recheck.Kept
}

func hasFiles(dir string) bool {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, e := range ents {
		if e.Name() != ".git" && e.Name() != store.AgencyDir {
			return true
		}
	}
	return false
}

// GC removes what plan lists (the items not kept), each under the repo
// lock, every directory through store.RemoveAllInside. progress (when not
// nil) is told of each item as it is handled.
func (a *App) GC(ctx context.Context, plan *GCResult, progress func(GCStep)) *GCResult {
	plan.DryRun = false
	total := 0
	for _, it := range plan.Items {
		if !it.Kept {
			total++
		}
	}
	done := 0
	for i := range plan.Items {
		it := &plan.Items[i]
		if it.Kept {
			continue
		}
		if err := a.gcOne(ctx, it); err != nil {
			it.Error = errs.As(err).Msg
		} else if !it.Kept { // Kept: the re-check under the lock found work in it
			it.Removed = true
			plan.BytesFreed += it.Bytes
		}
		done++
		if progress != nil {
			progress(GCStep{Phase: GCDone, Item: *it, Done: done, Total: total, BytesFreed: plan.BytesFreed})
		}
	}
	return plan
}

func (a *App) gcOne(ctx context.Context, it *GCItem) error {
	ctx, unlock, err := a.lockWork(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	switch it.Kind {
	case GCSandboxTree:
		r, err := a.Store.ReadInvocation(it.Invocation)
		if err != nil {
			return errs.StoreCorrupt(a.Store.InvocationMetaPath(it.Invocation), err)
		}
		if Active(r) || Queued(r) {
			return errs.New(errs.EInvocationRunning, "", "invocation %s started running again", it.Invocation)
		}
		tree := a.Store.SandboxTreePath(it.Invocation)
		if err := store.CheckInside(a.Store.SandboxesDir(), tree); err != nil {
			return err
		}
		// The plan may be old (a prompt waited for an answer): look again.
		if a.keptOnRecheck(ctx, it, tree) {
			return nil
		}
		if err := a.Repo.WorktreeRemove(ctx, tree, true); err != nil {
			// Not a registered worktree any more: remove the directory.
			if err := store.RemoveAllInside(a.Store.SandboxesDir(), tree); err != nil {
				return err
			}
		}
		if err := a.pruneOurs(ctx); err != nil {
			return err
		}
		a.event(it.Invocation, "gc", map[string]any{"removed": "sandbox_tree"})
		return nil
	case GCOrphanDir:
		if _, err := os.Stat(a.Store.InvocationMetaPath(it.Invocation)); err == nil {
			return errs.New(errs.EInternal, "", "invocation %s has a record now; left alone", it.Invocation)
		}
		tree := a.Store.SandboxTreePath(it.Invocation)
		if err := store.CheckInside(a.Store.SandboxesDir(), tree); err != nil {
			return err
		}
		if _, err := os.Stat(tree); err == nil {
			a.Repo.WorktreeRemove(ctx, tree, true) // best effort: the directory goes next
		}
		if err := store.RemoveAllInside(a.Store.SandboxesDir(), a.Store.SandboxDir(it.Invocation)); err != nil {
			return err
		}
		return a.pruneOurs(ctx)
	case GCRegistration:
		return a.pruneOurs(ctx)
	case GCTempFile, GCInvocationDir:
		return a.removeLeftover(it)
	case GCWorktreeDir:
		if !a.Store.MissingWorktreeMeta(it.Invocation) {
			return errs.New(errs.EInternal, "", "worktree %s has a record now; left alone", it.Invocation)
		}
		tree := a.Store.IntegrationWorktreeTreePath(it.Invocation)
		if a.keptOnRecheck(ctx, it, tree) {
			return nil
		}
		if _, err := os.Stat(tree); err == nil {
			a.Repo.WorktreeRemove(ctx, tree, true) // best effort: the directory goes next
		}
		if err := store.RemoveAllInside(a.Store.IntegrationWorktreesDir(), it.Target); err != nil {
			return err
		}
		return a.pruneOurs(ctx)
	case GCTmuxSession:
		ctx, cancel := context.WithTimeout(ctx, tmuxWait)
		defer cancel()
		if err := TmuxClient().KillSession(ctx, it.Target); err != nil {
			return errs.New(errs.EIO, "", "tmux kill-session %s: %v", it.Target, err)
		}
		return nil
	case GCBranch:
		if it.orphanOf != "" {
			if _, err := os.Lstat(it.orphanOf); err == nil {
				return errs.New(errs.EInternal, "", "branch %s has a record now (%s); left alone", it.Target, it.orphanOf)
			}
		}
		return gitErr(a.Repo.DeleteBranch(ctx, it.Target, true))
	case GCSnapshotRef, GCKeptRef:
		return gitErr(a.Repo.DeleteRef(ctx, it.Target))
	}
	return nil
}

// pruneOurs removes git's registrations of worktrees inside our data
// directory whose directory is gone, and of the exact paths in also (an
// adopted tree that vanished), and only those: never the user's other
// stale worktrees (a removable disk, a moved folder: their staged work and
// HEAD live in the registration), never a locked one. It is the only way
// git-agency prunes: there is no plain `git worktree prune`.
func (a *App) pruneOurs(ctx context.Context, also ...string) error {
	regs, err := a.Repo.AdminWorktrees()
	if err != nil {
		return errs.IO("read", filepath.Join(a.Repo.CommonDir, "worktrees"), err)
	}
	named := func(p string) bool {
		for _, x := range also {
			if canonical(x) == canonical(p) {
				return true
			}
		}
		return false
	}
	for _, w := range regs {
		if w.Locked || !(inside(a.Store.RepoDir(), w.Path) || named(w.Path)) {
			continue
		}
		if _, err := os.Stat(w.Path); !os.IsNotExist(err) {
			continue
		}
		if err := store.RemoveAllInside(filepath.Join(a.Repo.CommonDir, "worktrees"), w.AdminDir); err != nil {
			return err
		}
	}
	return nil
}

func firstTime(ps ...*string) time.Time {
	for _, p := range ps {
		if p == nil || *p == "" {
			continue
		}
		if t, err := time.Parse(time.RFC3339, *p); err == nil {
			return t
		}
	}
	return time.Time{}
}

func roundAge(d time.Duration) string {
	if d >= 48*time.Hour {
		return fmt.Sprintf("%dd", int(d.Hours()/24))
	}
	if d >= time.Hour {
		return fmt.Sprintf("%dh", int(d.Hours()))
	}
	return fmt.Sprintf("%dm", int(d.Minutes()))
}

// ParseAge parses a --older-than value: a Go duration or a number of days
// ("30d").
func ParseAge(s string) (time.Duration, error) {
	if d, ok := strings.CutSuffix(s, "d"); ok {
		var n int
		if _, err := fmt.Sscanf(d, "%d", &n); err == nil && n >= 0 && fmt.Sprint(n) == d {
			return time.Duration(n) * 24 * time.Hour, nil
		}
	}
	return time.ParseDuration(s)
}

// StaleTempAge is the age past which a temp file has no live writer: a
// record write or a snapshot's temp index lives for well under a second,
// even a checkpoint of a very large tree for far less than this.
const StaleTempAge = 10 * time.Minute

// staleTemp tells whether a temp file has no live writer: its name carries
// the writer's pid and that process is gone (a kill -9 leaves this at
// once), or, for a name without a pid or whose pid is alive again (reuse),
// it is older than StaleTempAge.
func staleTemp(path string, mod, now time.Time) bool {
	name := filepath.Base(path)
	marker := store.AtomicTempMarker
	if strings.HasPrefix(name, gitcore.SnapshotIndexPrefix) {
		marker = gitcore.SnapshotIndexPrefix
	}
	return store.TempWriterGone(name, marker) || now.Sub(mod) >= StaleTempAge
}

// Leftover is what a process killed in the middle of a step left behind
// in the data directory or the git directory.
type Leftover struct {
	Kind       string // GCTempFile or GCInvocationDir
	Invocation string
	Path       string
	Bytes      int64
	Reason     string
}

// leftovers finds the residue of killed writers: WriteFileAtomic temp
// files and SnapshotTree temp indexes older than StaleTempAge (a younger
// one may belong to a write in progress), and invocation directories
// without meta.json. A start creates the directory and writes the record
// under the repo lock, so a directory still without its record once the
// lock is ours is a leftover whatever its age.
func (a *App) leftovers() []Leftover {
	var out []Leftover
	now := a.Now()
	isIndex := func(name string) bool { return strings.HasPrefix(name, gitcore.SnapshotIndexPrefix) }
	for _, g := range []struct {
		files []store.TempFile
		what  string
	}{
		{a.Store.AtomicTemps(), "temp file of a record write"},
		{store.FilesIn(a.Repo.SnapshotIndexDirs(), isIndex), "temp index of a checkpoint"},
	} {
		for _, t := range g.files {
			if staleTemp(t.Path, t.ModTime, now) {
				out = append(out, Leftover{Kind: GCTempFile, Path: t.Path, Bytes: t.Size,
					Reason: g.what + " that was cut short (" + roundAge(now.Sub(t.ModTime)) + " old)"})
			}
		}
	}
	ids, _ := store.ReadDirNames(a.Store.InvocationsDir())
	var missing, missingWt []string
	for _, id := range ids {
		if a.Store.MissingMeta(id) {
			missing = append(missing, id)
		}
	}
	wids, _ := store.ReadDirNames(a.Store.IntegrationWorktreesDir())
	for _, id := range wids {
		if a.Store.MissingWorktreeMeta(id) {
			missingWt = append(missingWt, id)
		}
	}
	if len(missing) == 0 && len(missingWt) == 0 {
		return out
	}
	// Bounded: doctor must not hang behind a long land. No subprocess
	// runs under this lock: it only looks at directories.
	lock, err := a.Store.Lock(min(a.LockTimeout, 3*time.Second))
	if err != nil {
		return out
	}
	defer lock.Unlock()
	for _, id := range missing {
		if a.Store.MissingMeta(id) {
			dir := a.Store.InvocationDir(id)
			out = append(out, Leftover{Kind: GCInvocationDir, Invocation: id, Path: dir, Bytes: store.DirSize(dir),
				Reason: "no meta.json: left by an agent start that was killed"})
		}
	}
	for _, id := range missingWt {
		if a.Store.MissingWorktreeMeta(id) {
			dir := a.Store.IntegrationWorktreeDir(id)
			out = append(out, Leftover{Kind: GCWorktreeDir, Invocation: id, Path: dir, Bytes: store.DirSize(dir),
				Reason: "no meta.json: left by a worktree create that was killed"})
		}
	}
	return out
}

// orphanBranch is a branch a killed `worktree create` (agency/<name>-<short>
// of a record directory without meta.json) or a killed `agent start`
// (agency/sandbox-<id> of no invocation record) left behind.
type orphanBranch struct {
	Name       string // without refs/heads/
	ID         string // the invocation or worktree id it was made for
	Reason     string
	MetaPath   string // the record whose absence makes it an orphan
	Elsewhere  bool   // every commit of it is on another branch
	CheckedOut string // a worktree that has it checked out
}

// orphanBranches lists the branches killed creates and starts left; known
// tells whether an invocation has a record (or a broken one).
func (a *App) orphanBranches(ctx context.Context, left []Leftover, known func(inv string) bool) []orphanBranch {
	claimed := map[string]bool{}
	if wts, err := a.Store.ScanWorktrees(); err == nil {
		for _, w := range wts {
			if w.Record != nil {
				claimed[w.Record.Branch] = true
			}
		}
	}
	checkedOut := map[string]string{}
	if wts, err := a.Repo.Worktrees(ctx); err == nil {
		for _, w := range wts {
			if w.Branch != "" {
				checkedOut[strings.TrimPrefix(w.Branch, "refs/heads/")] = w.Path
			}
		}
	}
	var out []orphanBranch
	addRef := func(ref gitcore.Ref, id, meta, reason string) {
		name := strings.TrimPrefix(ref.Name, "refs/heads/")
		if claimed[name] {
			return
		}
		ok, err := a.Repo.ReachableFromOtherBranch(ctx, ref.Name, ref.Name)
		out = append(out, orphanBranch{Name: name, ID: id, Reason: reason, MetaPath: meta,
			Elsewhere: err == nil && ok, CheckedOut: checkedOut[name]})
	}
	if refs, err := a.Repo.ForEachRef(ctx, "refs/heads/"+store.SandboxBranch("*")); err == nil {
		for _, ref := range refs {
			id := strings.TrimPrefix(ref.Name, "refs/heads/"+store.SandboxBranch(""))
			if !store.ValidID(id) || known(id) {
				continue
			}
			addRef(ref, id, a.Store.InvocationMetaPath(id), "no invocation record: left by an agent start that was killed")
		}
	}
	for _, l := range left {
		if l.Kind != GCWorktreeDir {
			continue
		}
		refs, err := a.Repo.ForEachRef(ctx, "refs/heads/agency/*-"+store.ShortID(l.Invocation))
		if err != nil {
			continue
		}
		for _, ref := range refs {
			rest := strings.TrimPrefix(ref.Name, "refs/heads/agency/")
			if store.ValidID(strings.TrimPrefix(rest, "sandbox-")) {
				continue // a sandbox branch
			}
			addRef(ref, l.Invocation, a.Store.IntegrationWorktreeMetaPath(l.Invocation), "no worktree record: left by a worktree create that was killed")
		}
	}
	return out
}

// removeLeftover removes one leftover, looking again first (the caller
// holds the repo lock).
func (a *App) removeLeftover(it *GCItem) error {
	if it.Kind == GCInvocationDir {
		if !a.Store.MissingMeta(it.Invocation) {
			return errs.New(errs.EInternal, "", "invocation %s has a record now; left alone", it.Invocation)
		}
		return store.RemoveAllInside(a.Store.InvocationsDir(), a.Store.InvocationDir(it.Invocation))
	}
	fi, err := os.Lstat(it.Target)
	if err != nil {
		return nil // gone already
	}
	if !fi.Mode().IsRegular() || !staleTemp(it.Target, fi.ModTime(), a.Now()) {
		it.Kept, it.KeptWhy = true, "written to since the plan: not stale"
		return nil
	}
	if err := os.Remove(it.Target); err != nil && !os.IsNotExist(err) {
		return errs.IO("remove", it.Target, err)
	}
	return nil
}
