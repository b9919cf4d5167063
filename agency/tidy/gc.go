package tidy

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/git-agency/git-agency/agency/internal/core"
	"github.com/git-agency/git-agency/errs"
	"github.com/git-agency/git-agency/gitcore"
	"github.com/git-agency/git-agency/runner/tmux"
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
	// LandedElsewhere (a host's gc, run by the machine its agents were
	// started from) are the invocations that machine landed: their sandbox
	// trees here count as landed ones, since a host never lands.
	LandedElsewhere []string
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
	GCUndoRef       = "undo_ref"       // refs/agency/undo/<seq>: what undo of a worktree rm --force needs
	GCQueuedEnv     = "queued_env"     // invocations/<id>/queued-env of an invocation no longer queued
	GCRetiredTree   = "retired_tree"   // retired/<name>/ that no remover deletes
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
	// Orphan: an undo ref no operation named when planned.
	Orphan bool   `json:"-"`
	tree   string // the sandbox tree to look at before removing
	admin  string // admin dir of a registration
	forced bool   // planned with --force: no re-check of the tree's work
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

// keepIfDirty marks an item kept when its tree holds uncommitted work
// (decideTrees for one item; its size is left as it is).
func (a *Tidier) keepIfDirty(ctx context.Context, it *GCItem, tree string, force bool) {
	one := []GCItem{*it}
	one[0].tree, one[0].forced = tree, force
	a.decideTrees(ctx, one, []int{0}, false)
	if one[0].Kept {
		it.Kept, it.KeptWhy = true, one[0].KeptWhy
	}
}

// treeLook is what decideTrees sees of one tree.
type treeLook struct {
	gone, dirty bool
	// notDir: a symlink or a file stands at the tree's path; it holds no
	// work of ours and is never followed (it may name the user's worktree).
	notDir bool
	err    error
	head   string
}

// lookAtTree says whether tree is gone, has uncommitted changes (one `git
// status`) and its HEAD (read from files when they can say).
func (a *Tidier) lookAtTree(ctx context.Context, tree string) treeLook {
	fi, err := os.Lstat(tree)
	if err != nil {
		return treeLook{gone: true}
	}
	if !fi.IsDir() {
		return treeLook{notDir: true}
	}

	t := a.Repo.Tree(tree)

	// (our own files in .agency/ are no one's work: a create killed while
	// writing its .gitignore leaves them untracked; a tracked file there
	// is the agent's)
	dirty, err := t.HoldsWork(ctx, store.AgencyDir, core.IsAgencyFile)
	if err != nil || dirty {
		return treeLook{dirty: dirty, err: err}
	}

	head := t.HeadFromFiles()
	if head == "" {
		head, _ = t.Head(ctx)
	}

	return treeLook{head: head}
}

// decideTrees marks the items (indexes into items) kept whose tree holds
// work: uncommitted changes (one `git status` each, several at once), or a
// HEAD with commits no ref has (one reachability walk for all of them).
// Forced items are not looked at. With measure, the size of an item that
// goes is measured then, and only then: measuring a tree costs a stat per
// file.
func (a *Tidier) decideTrees(ctx context.Context, items []GCItem, idx []int, measure bool) {
	looks := make([]treeLook, len(idx))
	core.EachParallel(len(idx), func(k int) {
		if it := &items[idx[k]]; !it.forced {
			looks[k] = a.lookAtTree(ctx, it.tree)
		}
	})
	heads := map[int]string{}
	var commits []string
	for k, i := range idx {
		it, l := &items[i], looks[k]
		switch {
		case it.forced || l.gone || l.notDir:
		case l.err != nil:
			// Not a working git tree: its files may still be someone's work.
			if hasFiles(it.tree) {
				it.Kept, it.KeptWhy = true, "its tree is not a readable git worktree (--force removes it)"
			}
		case l.dirty:
			it.Kept, it.KeptWhy = true, "its tree has uncommitted changes (--force removes it)"
		case l.head != "":
			// An agent that committed on a detached HEAD (or another
			// branch): those commits live only in this tree's HEAD.
			heads[i] = l.head
			commits = append(commits, l.head)
		}
	}

	// When the walk fails (a HEAD that is no commit of this repository:
	// another repository stands at the tree's path), every tree with a
	// HEAD is kept: its commits may be nowhere else.
	unreachable, err := a.Repo.Unreachable(ctx, commits)
	for i, head := range heads {
		if err != nil {
			items[i].Kept, items[i].KeptWhy = true, "its HEAD could not be found in this repository's history (--force removes it)"
		} else if unreachable[head] {
			items[i].Kept, items[i].KeptWhy = true, "its HEAD holds commits no branch or ref has (--force removes it)"
		}
	}

	// A commit made inside a submodule lives only in the tree's own
	// submodule repository until it is pushed.
	for k, i := range idx {
		if it := &items[i]; !it.forced && !it.Kept && !looks[k].notDir {
			if subs := a.LocalOnlySubmodules(ctx, it.tree); len(subs) > 0 {
				it.Kept, it.KeptWhy = true, "its submodule "+subs[0]+" holds a commit that exists only in this tree (--force removes it)"
			}
		}
	}

	if measure {
		// A stat per file: several trees at once.
		core.EachParallel(len(idx), func(k int) {
			if it := &items[idx[k]]; !it.Kept {
				it.Bytes = store.DirSize(it.Target)
			}
		})
	}
}

// keptOnRecheck looks at an item's tree again under the lock (the plan may
// be old) and marks the item kept when it now holds work.
func (a *Tidier) keptOnRecheck(ctx context.Context, it *GCItem, tree string) bool {
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
func (a *Tidier) GC(ctx context.Context, plan *GCResult, progress func(GCStep)) *GCResult {
	plan.DryRun = false
	a.Host.Settle(ctx)
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

	a.repairRecordsGen(ctx)
	return plan
}

// repairRecordsGen makes a records generation left dirty by a killed
// writer clean again (best effort: reads stay correct, only slower, until
// then).
func (a *Tidier) repairRecordsGen(ctx context.Context) {
	if !a.Store.RecordsGenDirty() {
		return // the usual case: no lock taken for nothing
	}

	_, unlock, err := a.LockWork(ctx)
	if err != nil {
		return
	}
	defer unlock()
	_ = a.Store.RepairRecordsGen()
}

func (a *Tidier) gcOne(ctx context.Context, it *GCItem) error {
	ctx, unlock, err := a.LockWork(ctx)
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
		if r.Active() || r.Queued() {
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
		if err := a.Host.RemoveTreeAt(ctx, a.Store.SandboxesDir(), tree); err != nil {
			return err
		}

		a.Event(it.Invocation, "gc", map[string]any{"removed": "sandbox_tree"})
		return nil
	case GCOrphanDir:
		if _, err := os.Stat(a.Store.InvocationMetaPath(it.Invocation)); err == nil {
			return errs.New(errs.EInternal, "", "invocation %s has a record now; left alone", it.Invocation)
		}

		tree := a.Store.SandboxTreePath(it.Invocation)
		if err := store.CheckInside(a.Store.SandboxesDir(), tree); err != nil {
			return err
		}

		if fi, err := os.Lstat(tree); err == nil && fi.IsDir() { // (a link goes with its directory, never followed)
			_ = a.Repo.WorktreeRemove(ctx, tree, true) // best effort: the directory goes next, and says when it cannot
		}

		if err := store.RemoveAllInside(a.Store.SandboxesDir(), a.Store.SandboxDir(it.Invocation)); err != nil {
			return err
		}

		return a.PruneOurs(ctx)
	case GCRegistration:
		return a.PruneOurs(ctx)
	case GCTempFile, GCInvocationDir:
		return a.removeLeftover(it)
	case GCQueuedEnv:
		return a.Host.RemoveQueuedEnvLeftover(it)
	case GCVerifyTree:
		return a.gcVerifyTree(ctx, it)
	case GCRetiredTree:
		return a.Host.RemoveRetiredLeftover(it)
	case GCWorktreeDir:
		if !a.Store.MissingWorktreeMeta(it.Invocation) {
			return errs.New(errs.EInternal, "", "worktree %s has a record now; left alone", it.Invocation)
		}

		tree := a.Store.IntegrationWorktreeTreePath(it.Invocation)
		if a.keptOnRecheck(ctx, it, tree) {
			return nil
		}

		if fi, err := os.Lstat(tree); err == nil && fi.IsDir() { // (a link goes with its directory, never followed)
			_ = a.Repo.WorktreeRemove(ctx, tree, true) // best effort: the directory goes next, and says when it cannot
		}

		if err := a.undoKilledAdopt(it.Target); err != nil {
			return err
		}
		if err := store.RemoveAllInside(a.Store.IntegrationWorktreesDir(), it.Target); err != nil {
			return err
		}

		return a.PruneOurs(ctx)
	case GCTmuxSession:
		ctx, cancel := context.WithTimeout(ctx, core.TmuxWait)
		defer cancel()
		// (a session that ended since the plan, its server with it, is
		// gone already: what gc was to do)
		if err := (&tmux.Client{}).KillSession(ctx, it.Target); err != nil && !errors.Is(err, tmux.ErrNotFound) {
			return errs.New(errs.EIO, "", "tmux kill-session %s: %v", it.Target, err)
		}
		return nil
	case GCBranch:
		if it.orphanOf != "" {
			if _, err := os.Lstat(it.orphanOf); err == nil {
				return errs.New(errs.EInternal, "", "branch %s has a record now (%s); left alone", it.Target, it.orphanOf)
			}
		}
		return core.GitErr(a.Repo.DeleteBranch(ctx, it.Target, true))
	case GCUndoRef:
		if it.Orphan && a.undoRefNeeded(it.Target) {
			it.Kept, it.KeptWhy = true, "a worktree rm --force logged it meanwhile"
			return nil
		}
		return core.GitErr(a.Repo.DeleteRef(ctx, it.Target))
	case GCSnapshotRef, GCKeptRef:
		return core.GitErr(a.Repo.DeleteRef(ctx, it.Target))
	}

	return nil
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
