package agency

import (
	"context"
	"os"
	"strconv"
	"strings"

	"github.com/git-agency/git-agency/checkpoint"
	"github.com/git-agency/git-agency/errs"
	"github.com/git-agency/git-agency/store"
	"github.com/git-agency/git-agency/wall"
)

// checkpointOptions are the options of a checkpoint of rec's sandbox.
func (a *App) checkpointOptions(rec *store.InvocationRecord, reason string) checkpoint.Options {
	path := rec.SandboxPath
	if path == "" {
		path = a.Store.SandboxTreePath(rec.InvocationID)
	}

	// A bad size was refused at start (PrepareStart); here the default
	// stands in for it.
	o, _ := checkpoint.FromConfig(a.Repo, a.Store, a.Config, rec.InvocationID, path, rec.IncludeUntracked, reason)
	o.Warn = func(err error) { a.warn(rec.InvocationID, err) }
	o.Shadow, o.Branch = wall.ShadowDir(a.Store, rec.InvocationID), strings.TrimPrefix(rec.SandboxBranch, "refs/heads/")
	return o
}

// ListCheckpoints is `checkpoint ls`: an invocation's checkpoints, oldest
// first (checkpoints.json plus any snapshot ref it misses).
func (a *App) ListCheckpoints(ctx context.Context, query string) (*store.InvocationRecord, []store.Checkpoint, error) {
	rec, err := a.ResolveInvocation(query)
	if err != nil {
		return nil, nil, err
	}

	list, err := checkpoint.List(ctx, a.Repo, a.Store, rec.InvocationID)
	if err != nil {
		return nil, nil, gitErr(err)
	}

	return rec, list, nil
}

// checkpointsError says why an invocation's checkpoints fail, or "": its
// checkpoints.json does not decode, so every checkpoint (the supervisor's
// and `checkpoint create`) fails until it is repaired.
func (a *App) checkpointsError(rec *store.InvocationRecord) string {
	if a.Store.CheckpointsError(rec.InvocationID) != nil {
		return a.checkpointsDamaged(rec)
	}
	return ""
}

func (a *App) checkpointsDamaged(rec *store.InvocationRecord) string {
	return "checkpoints are failing: " + a.Store.CheckpointsPath(rec.InvocationID) + " is damaged (see 'git agency doctor')"
}

// sandboxGone is E_NOT_FOUND for rec's sandbox tree at path: landed or
// discarded, or, while it waits to land, removed by another program.
func sandboxGone(rec *store.InvocationRecord, path string) error {
	if rec.LandingStatus != nil && *rec.LandingStatus == store.LandingPending {
		return errs.SandboxRemoved(rec.InvocationID, path)
	}
	return errs.SandboxGone(rec.InvocationID, path)
}

// sandboxPresent returns E_NOT_FOUND when the invocation's sandbox tree is
// gone (landed or discarded).
func (a *App) sandboxPresent(rec *store.InvocationRecord) error {
	o := a.checkpointOptions(rec, "")
	if fi, err := os.Stat(o.SandboxPath); err != nil || !fi.IsDir() {
		return sandboxGone(rec, o.SandboxPath)
	}
	return nil
}

// CreateCheckpoint is `checkpoint create`: a manual checkpoint, whether the
// agent runs or not. It returns nil when nothing changed since the last
// checkpoint, with that checkpoint's id (0 when there is none).
func (a *App) CreateCheckpoint(ctx context.Context, query string) (*store.InvocationRecord, *store.Checkpoint, int, error) {
	rec, err := a.ResolveInvocation(query)
	if err != nil {
		return nil, nil, 0, err
	}
	if err := a.sandboxPresent(rec); err != nil {
		return rec, nil, 0, err
	}

	cp, err := checkpoint.Take(ctx, a.checkpointOptions(rec, store.CheckpointManual))
	if err != nil || cp != nil {
		return rec, cp, 0, err
	}

	latest, err := a.latestCheckpoint(ctx, rec.InvocationID)
	return rec, nil, latest, err
}

// latestCheckpoint is the highest checkpoint number whose ref exists.
func (a *App) latestCheckpoint(ctx context.Context, inv string) (int, error) {
	n, err := checkpoint.Latest(ctx, a.Repo, inv)
	return n, gitErr(err)
}

// FPApplyAfterLog fails a checkpoint apply once it logged itself, before
// the files change.
const FPApplyAfterLog = "checkpoint-apply:after-log"

// ApplyResult is what `checkpoint apply` did.
type ApplyResult struct {
	Invocation *store.InvocationRecord
	// Applied is the checkpoint the sandbox now holds.
	Applied store.Checkpoint
	// Undo is the checkpoint holding the state before the rollback: taken
	// now (UndoTaken), or an existing one equal to it. 0 when the sandbox
	// had nothing uncommitted and no checkpoint yet.
	Undo      int
	UndoTaken bool
	// Head is the sandbox's HEAD, which the rollback does not move, and
	// LaterCommits how many commits it has past the checkpoint's HEAD
	// (Applied.HeadSHA): their changes are undone in the files, so they
	// show as uncommitted changes.
	Head         string
	LaterCommits int
}

// ApplyCheckpoint is `checkpoint apply`: it rolls an invocation's sandbox
// back to checkpoint id. It refuses while the agent runs. Before it changes
// anything it saves the current state as a checkpoint ("before-apply") so
// the rollback itself can be undone. Then: `git reset --hard`, `git clean
// -fd` (never .agency/), the working tree set to the snapshot's tree (files
// the snapshot lacks are removed), and the index reset to HEAD so files
// that were untracked at checkpoint time are untracked again. HEAD and the
// sandbox branch do not move.
func (a *App) ApplyCheckpoint(ctx context.Context, query, id string) (*ApplyResult, error) {
	rec, err := a.ResolveInvocation(query)
	if err != nil {
		return nil, err
	}

	n, err := strconv.Atoi(id)
	if err != nil || n <= 0 {
		return nil, errs.CheckpointNotFound(rec.InvocationID, id)
	}

	ctx, unlock, err := a.lockWork(ctx)
	if err != nil {
		return nil, err
	}
	defer unlock()

	if cur, err := a.Store.ReadInvocation(rec.InvocationID); err == nil {
		rec = cur
	}

	rec = a.reconcileLocked(ctx, rec)
	if rec.Active() {
		return nil, errs.CheckpointApplyRunning(rec.InvocationID)
	}
	if err := a.sandboxPresent(rec); err != nil {
		return nil, err
	}

	applied, err := checkpoint.Find(ctx, a.Repo, a.Store, rec.InvocationID, n, id)
	if err != nil {
		return nil, err
	}

	ref, commit := applied.SnapshotRef, applied.SnapshotCommit
	res := &ApplyResult{Invocation: rec, Applied: applied}

	st, err := a.Repo.Tree(rec.SandboxPath).Status(ctx)
	if err != nil {
		return nil, gitErr(err)
	}
	if both := checkpoint.StagedAndChanged(st); len(both) > 0 {
		return nil, errs.CheckpointApplyStaged(rec.InvocationID, both)
	}

	o := a.checkpointOptions(rec, store.CheckpointBeforeApply)
	var keep []string
	if res.Undo, res.UndoTaken, keep, err = checkpoint.BeforeApply(ctx, o, st); err != nil {
		return nil, gitErr(err)
	}

	// Log it before the files change: `undo` goes back to res.Undo.
	head, err := a.Repo.Tree(o.SandboxPath).Head(ctx)
	if err != nil {
		return nil, gitErr(err)
	}

	res.Head = head
	if applied.HeadSHA != "" && head != applied.HeadSHA {
		if log, err := a.Repo.LogOneline(ctx, applied.HeadSHA, head, false); err == nil {
			res.LaterCommits = strings.Count(string(log), "\n")
		}
	}

	restore := &store.Restore{Branch: rec.SandboxBranch, Head: head, Checkpoint: res.Undo}
	if res.Undo > 0 {
		restore.Ref = store.SnapshotRef(rec.InvocationID, res.Undo)
		if restore.Commit, err = a.Repo.RevParse(ctx, restore.Ref); err != nil {
			return nil, gitErr(err)
		}
	}

	if _, err := a.Store.AppendOperation(store.Operation{Op: store.OpCheckpointApply, InvocationID: rec.InvocationID,
		WorktreeID: rec.IntegrationWorktreeID, Applied: n, AppliedCommit: commit, Restore: restore}); err != nil {
		return nil, err
	}
	if err := a.fail(FPApplyAfterLog); err != nil {
		return nil, err
	}

	cl, err := a.Store.LockCheckpoints(rec.InvocationID, checkpoint.LockTimeout)
	if err != nil {
		return nil, err
	}
	defer cl.Unlock()

	if err := a.resetFiles(ctx, o.SandboxPath, commit, keep); err != nil {
		return nil, err
	}

	a.event(rec.InvocationID, "checkpoint_applied", map[string]any{
		"id": n, "snapshot_ref": ref, "undo_checkpoint": res.Undo, "invocation_id": rec.InvocationID,
	})
	return res, nil
}
