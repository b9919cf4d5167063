package agency

import (
	"context"
	"path/filepath"
	"time"

	"github.com/git-agency/git-agency/errs"
	"github.com/git-agency/git-agency/runner"
	"github.com/git-agency/git-agency/store"
)

// FPDiscardAfterLog fails a discard once it logged itself, before the
// tree goes.
const FPDiscardAfterLog = "discard:after-log"

// StopGrace is how long a stopped invocation gets before it is killed
// (discard, worktree rm --force).
var StopGrace = 5 * time.Second

// Discard is `agent discard`: a running invocation is stopped (5 s grace,
// then killed); its uncommitted work is saved as a checkpoint; the record
// says discarded; the sandbox tree is removed. Its branch and snapshot
// refs are kept until gc (--older-than), so `undo` can bring it back.
func (a *App) Discard(ctx context.Context, query string) (*DiscardResult, error) {
	rec, err := a.ResolveInvocation(query)
	if err != nil {
		return nil, err
	}

	rec = a.Reconcile(ctx, rec)
	if store.Deref(rec.LandingStatus) == store.LandingLanded {
		return nil, errs.AlreadyLanded(rec.InvocationID)
	}

	out := &DiscardResult{}
	if rec.Active() {
		out.Stopped = true
		if rec, err = a.stopAndWait(ctx, rec, StopGrace); err != nil {
			return nil, err
		}
	}

	ctx, unlock, err := a.lockWork(ctx)
	if err != nil {
		return nil, err
	}
	defer unlock()

	if rec, err = a.discardLocked(ctx, rec.InvocationID, out); err != nil {
		return nil, err
	}

	out.Invocation = rec
	return out, nil
}

// DiscardResult is what a discard did.
type DiscardResult struct {
	Invocation       *store.InvocationRecord
	Stopped          bool // it was running and was stopped (or killed)
	AlreadyDiscarded bool
	// Restore is what `undo` brings back: the branch, and the checkpoint
	// holding the uncommitted work (none when the tree was clean).
	Restore *store.Restore
	// Kept is the ref that now holds commits the sandbox's HEAD had and no
	// branch or ref did (refs/agency/kept/<inv>/HEAD), "" when none.
	Kept string
	// KeptSubmodules are the refs (refs/agency/kept/<inv>/submodule/<path>)
	// that now hold commits made inside the sandbox's submodules that only
	// the sandbox had.
	KeptSubmodules []string
	// DirtySubmodules are the sandbox's submodules that had changed or
	// untracked files inside them: no checkpoint holds those, they went
	// with the sandbox.
	DirtySubmodules []string
}

// keepSandboxHead saves a sandbox HEAD that no branch reaches (an agent
// that committed on a detached HEAD; its checkpoints, which do reach it,
// go with the discard) under refs/agency/kept/<inv>/HEAD before its tree
// goes, and returns that ref ("" when nothing needed keeping).
// gc deletes it with the invocation's other refs: only once its commits
// are on a branch, or with --force.
func (a *App) keepSandboxHead(ctx context.Context, rec *store.InvocationRecord) (string, error) {
	return a.keepTreeHead(ctx, a.sandboxTree(rec), rec.InvocationID)
}

// keepSubmoduleHeads fetches, before a tree goes (a sandbox, an
// integration worktree: id is its invocation's or worktree's), the HEAD of
// each of its submodules that only the tree's own submodule repository has
// into the repository, under refs/agency/kept/<id>/submodule/<path>, and
// returns those refs. gc deletes an invocation's as its other kept refs.
func (a *App) keepSubmoduleHeads(ctx context.Context, tree, id string) ([]string, error) {
	if tree == "" {
		return nil, nil
	}

	var refs []string
	for _, p := range a.localOnlySubmodules(ctx, tree) {
		ref := store.KeptRefPrefix(id) + "submodule/" + p
		if err := a.Repo.KeepSubmoduleHead(ctx, filepath.Join(tree, p), ref); err != nil {
			return refs, gitErr(err)
		}
		refs = append(refs, ref)
	}

	return refs, nil
}

// keepTreeHead saves the HEAD of tree under refs/agency/kept/<id>/HEAD when
// no branch reaches it, before the tree goes (a sandbox's discard, an
// integration worktree's rm), and returns that ref ("" when nothing needed
// keeping or there is no tree).
func (a *App) keepTreeHead(ctx context.Context, tree, id string) (string, error) {
	if tree == "" {
		return "", nil
	}

	head, err := a.Repo.Tree(tree).Head(ctx)
	if err != nil || head == "" {
		return "", nil // not a readable tree: nothing git can point at
	}

	if ok, err := a.Repo.ReachableFromOtherBranch(ctx, head, ""); err != nil {
		return "", gitErr(err)
	} else if ok {
		return "", nil
	}

	ref := store.KeptRefPrefix(id) + "HEAD"
	return ref, gitErr(a.Repo.UpdateRef(ctx, ref, head))
}

func (a *App) discardLocked(ctx context.Context, inv string, out *DiscardResult) (*store.InvocationRecord, error) {
	rec, err := a.Store.ReadInvocation(inv)
	if err != nil {
		return nil, errs.StoreCorrupt(a.Store.InvocationMetaPath(inv), err)
	}

	if rec.Land != nil && rec.Land.State == LandInProgress {
		if rec, err = a.recoverLandLocked(ctx, rec); err != nil {
			return nil, err
		}
	}

	if store.Deref(rec.LandingStatus) == store.LandingLanded {
		return nil, errs.AlreadyLanded(inv)
	}
	if a.reconcileLocked(ctx, rec).Active() {
		// It did not stop (a setup script, an agent ignoring signals):
		// never remove a tree something still runs in.
		return nil, errs.InvocationRunning(inv, "discard")
	}

	// Never remove a sandbox around live writers: what the agent left
	// behind (setsid children) is stopped first; what will not stop keeps
	// the sandbox.
	if _, alive := runner.StopLeftovers(inv, a.Store.SandboxTreePath(inv), runner.LeftoverGrace); len(alive) > 0 {
		return nil, errs.LeftoversAlive(inv, runner.Pids(alive))
	}

	out.AlreadyDiscarded = store.Deref(rec.LandingStatus) == store.LandingDiscarded
	if !out.AlreadyDiscarded {
		// Save the uncommitted work and log the discard before anything
		// goes: `undo` recreates the sandbox from its branch and this
		// checkpoint. Snapshot refs and branch stay until gc.
		restore, err := a.saveSandbox(ctx, rec, store.CheckpointBeforeDiscard)
		if err != nil {
			return nil, err
		}

		op := store.Operation{Op: store.OpDiscard, InvocationID: inv, WorktreeID: rec.IntegrationWorktreeID,
			LandingStatus: store.Deref(rec.LandingStatus), Restore: restore}
		if out.Stopped {
			op.Note = "it was running and was stopped"
		}

		if _, err := a.Store.AppendOperation(op); err != nil {
			return nil, err
		}

		out.Restore = restore

		if err := a.fail(FPDiscardAfterLog); err != nil {
			return nil, err
		}
	}

	if out.Kept, err = a.keepSandboxHead(ctx, rec); err != nil {
		return nil, err
	}
	if out.KeptSubmodules, err = a.keepSubmoduleHeads(ctx, a.sandboxTree(rec), rec.InvocationID); err != nil {
		return nil, err
	}

	out.DirtySubmodules, _ = a.dirtySubmodules(ctx, a.sandboxTree(rec)) // said when known

	if err := a.RemoveSandboxTree(ctx, rec); err != nil {
		return nil, err
	}
	if out.AlreadyDiscarded {
		return rec, nil
	}

	rec, err = a.Store.UpdateInvocationLocked(inv, func(r *store.InvocationRecord) error {
		r.LandingStatus = store.Str(store.LandingDiscarded)
		r.DiscardedAt = store.Str(a.now())
		return nil
	})
	if err != nil {
		return nil, err
	}

	// Out of the queue: its kept environment goes (store.QueuedEnvFile).
	a.dropQueuedEnv(inv)
	data := map[string]any{"stopped": out.Stopped}
	if out.Restore != nil && out.Restore.Checkpoint > 0 {
		data["checkpoint"] = out.Restore.Checkpoint
	}

	if out.Kept != "" {
		data["kept_ref"] = out.Kept
	}

	if len(out.KeptSubmodules) > 0 {
		data["kept_submodule_refs"] = out.KeptSubmodules
	}

	a.event(inv, "discarded", data)
	return rec, nil
}
