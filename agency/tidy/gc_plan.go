package tidy

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/git-agency/git-agency/agency/internal/core"
	"github.com/git-agency/git-agency/errs"
	"github.com/git-agency/git-agency/gitcore"
	"github.com/git-agency/git-agency/store"
)

// GCPlan finds what gc would remove (and what it keeps, and why). It
// changes nothing.
func (a *Tidier) GCPlan(ctx context.Context, opts GCOptions) (*GCResult, error) {
	p := &gcPlanner{a: a, ctx: ctx, opts: opts, res: &GCResult{DryRun: true}, progress: opts.Progress}
	if p.progress == nil {
		p.progress = func(GCStep) {}
	}

	if err := p.scanRecords(); err != nil {
		return nil, err
	}

	p.planLeftovers()
	p.planVerifyTrees()
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
	a        *Tidier
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
	// checkedOut: branch (without refs/heads/) → the worktree that has it
	// checked out (checkedOutAt).
	checkedOut map[string]string
	// locked: the trees git has locked (lockedWhy).
	locked map[string]bool
}

func (p *gcPlanner) add(it GCItem) { p.res.Items = append(p.res.Items, it) }

// flush reports the items decided since the last flush.
func (p *gcPlanner) flush() {
	for ; p.decided < len(p.res.Items); p.decided++ {
		p.progress(GCStep{Phase: GCDecided, Item: p.res.Items[p.decided]})
	}
}

// scanRecords reads the invocation records (as reads show them: View; GC
// records what a dead supervisor left unrecorded: Settle); a broken one is
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

		p.records[e.ID] = p.a.Host.View(p.ctx, e.Record)
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
	sbs, _ := store.ReadIDDirs(p.a.Store.SandboxesDir())
	for _, id := range sbs {
		it, ok := p.sandboxTreeItem(id)
		if !ok {
			continue
		}

		if why := p.lockedWhy(it.tree); why != "" {
			it.Kept, it.KeptWhy = true, why
			p.add(it)
			continue
		}

		p.add(it)
		trees = append(trees, len(p.res.Items)-1)
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
	if r == nil && p.a.startInProgress(id) {
		return GCItem{}, false // an agent start is making it
	}
	if r == nil {
		return GCItem{Kind: GCOrphanDir, Invocation: id, Target: p.a.Store.SandboxDir(id),
			Reason: "no invocation record", tree: tree, forced: p.opts.Force}, true
	}

	if _, err := os.Lstat(tree); err != nil {
		p.treeGoes[id] = true
		return GCItem{}, false
	}

	if r.Active() || r.Queued() {
		return GCItem{}, false // a queued sandbox waits for its agent
	}

	it := GCItem{Kind: GCSandboxTree, Invocation: id, Target: tree, tree: tree, forced: p.opts.Force}
	switch landing := store.Deref(r.LandingStatus); {
	case landing == store.LandingLanded, landing == store.LandingDiscarded:
		it.Reason = landing + "; its tree was left behind"
	case slices.Contains(p.opts.LandedElsewhere, id):
		it.Reason = "landed by the machine it was started from"
	default:
		if !p.opts.IncludePending {
			return GCItem{}, false
		}
		it.Reason = "finished, not landed (--include-pending; branch " + store.SandboxBranch(id) + " is kept)"
	}

	return it, true
}

// lockedWhy says why gc keeps tree ("" when it does not): the user locked
// it with `git worktree lock`, which `git worktree remove` honours too
// (gc keeps it even with --force, as it keeps a locked registration).
func (p *gcPlanner) lockedWhy(tree string) string {
	if tree == "" {
		return ""
	}

	if p.locked == nil {
		p.locked = map[string]bool{}
		if regs, err := p.a.Repo.AdminWorktrees(); err == nil {
			for _, w := range regs {
				if w.Locked {
					p.locked[core.Canonical(w.Path)] = true
				}
			}
		}
	}

	// git registers a tree by its real path; ours may reach it through a
	// symlink (a data directory under a HOME that is a link).
	if !p.locked[core.Canonical(tree)] {
		return ""
	}

	return "locked with 'git worktree lock' ('git worktree unlock " + tree + "' first)"
}

// planRegistrations: stale git worktree registrations inside our data
// directory.
func (p *gcPlanner) planRegistrations() {
	regs, err := p.a.Repo.AdminWorktrees()
	if err != nil {
		return
	}

	for _, w := range regs {
		if !core.Inside(p.a.Store.RepoDir(), w.Path) {
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
		if ok && r.Active() {
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
		if (o.Kind == GCOrphanDir || o.Kind == GCWorktreeDir || o.Kind == GCSandboxTree) && !o.Kept && core.Inside(o.Target, path) {
			return true
		}
	}
	return false
}

// planOldRefs: branches, snapshot refs and kept refs of invocations landed
// or discarded longer than OlderThan ago, from one listing of each
// namespace (not two git calls per record); then the undo refs no longer
// needed (see planUndoRefs).
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
		if r == nil || r.Active() {
			continue
		}

		landing := store.Deref(r.LandingStatus)
		if landing != store.LandingLanded && landing != store.LandingDiscarded {
			continue
		}

		if hostCopy(r) {
			p.planHostCopies(r, branches, snapshots[r.InvocationID])
			p.flush()
			continue
		}

		when := core.FirstTime(r.LandedAt, r.DiscardedAt, r.FinishedAt, &r.StartedAt)
		if when.IsZero() || when.After(cutoff) {
			continue
		}

		age := fmt.Sprintf("%s %s ago", landing, core.RoundAge(p.a.Now().Sub(when)))
		p.planBranch(r, branches, age)
		p.planSnapshotRefs(r, snapshots[r.InvocationID], landing, age)
		p.planKeptRefs(r, landing, when)
		p.flush()
	}

	for _, it := range p.a.planUndoRefs(p.ctx, cutoff) {
		p.add(it)
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
	} else if at := p.checkedOutAt(branch); at != "" && !p.treeGoesWith(at) {
		// A worktree of the user's (`git worktree add <dir> <branch>` to
		// look at an agent's work): git cannot delete it there.
		it.Kept, it.KeptWhy = true, "checked out in "+at
	} else if safe, why := p.a.branchWorkElsewhere(p.ctx, r, branchRef); !safe && !p.opts.Force {
		it.Kept, it.KeptWhy = true, why+" (--force deletes it)"
	}

	p.add(it)
}

// checkedOutAt is the worktree that has branch (without refs/heads/)
// checked out, "" for none; git's list is read once per plan, when a
// branch is first asked about.
func (p *gcPlanner) checkedOutAt(branch string) string {
	if p.checkedOut == nil {
		p.checkedOut = map[string]string{}
		if wts, err := p.a.Repo.Worktrees(p.ctx); err == nil {
			for _, w := range wts {
				if w.Branch != "" {
					p.checkedOut[strings.TrimPrefix(w.Branch, "refs/heads/")] = w.Path
				}
			}
		}
	}

	return p.checkedOut[branch]
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
			Reason: fmt.Sprintf("commits kept from its sandbox; %s %s ago", landing, core.RoundAge(p.a.Now().Sub(when)))}
		if ok, err := p.a.Repo.ReachableFromOtherBranch(p.ctx, ref.Object, ""); (err != nil || !ok) && !p.opts.Force {
			it.Kept, it.KeptWhy = true, "its commits are on no branch (--force deletes it)"
		}
		p.add(it)
	}
}

// branchWorkElsewhere tells whether every commit of a sandbox branch is on
// another branch, or was cherry-picked onto its integration branch.
func (a *Tidier) branchWorkElsewhere(ctx context.Context, r *store.InvocationRecord, branchRef string) (bool, string) {
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
func (a *Tidier) landedWorkOnBranch(ctx context.Context, r *store.InvocationRecord, branchRef string) bool {
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
