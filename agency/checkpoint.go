package agency

import (
	"context"
	"errors"
	"os"
	"strconv"
	"strings"

	"github.com/git-agency/git-agency/errs"
	"github.com/git-agency/git-agency/gitcore"
	"github.com/git-agency/git-agency/runner"
	"github.com/git-agency/git-agency/store"
)

// checkpointOptions are the options of a checkpoint of rec's sandbox.
func (a *App) checkpointOptions(rec *store.InvocationRecord, reason string) runner.CheckpointOptions {
	path := rec.SandboxPath
	if path == "" {
		path = a.Store.SandboxTreePath(rec.InvocationID)
	}
	// A bad size was refused at start (PrepareStart); here the default
	// stands in for it.
	leaveOut, maxSize, err := runner.LeaveOutFromConfig(a.Config)
	if err != nil {
		maxSize = runner.DefaultMaxFileSize
	}
	return runner.CheckpointOptions{
		Repo:             a.Repo,
		Store:            a.Store,
		Invocation:       rec.InvocationID,
		SandboxPath:      path,
		IncludeUntracked: rec.IncludeUntracked,
		Denylist:         runner.DenylistFromConfig(a.Config),
		LeaveOut:         leaveOut,
		MaxFileSize:      maxSize,
		Reason:           reason,
		Warn:             func(err error) { a.warn(rec.InvocationID, err) },
		Shadow:           runner.ShadowDir(a.Store, rec.InvocationID),
		Branch:           strings.TrimPrefix(rec.SandboxBranch, "refs/heads/"),
	}
}

// ListCheckpoints is `checkpoint ls`: an invocation's checkpoints, oldest
// first (checkpoints.json plus any snapshot ref it misses).
func (a *App) ListCheckpoints(ctx context.Context, query string) (*store.InvocationRecord, []store.Checkpoint, error) {
	rec, err := a.ResolveInvocation(query)
	if err != nil {
		return nil, nil, err
	}
	list, err := runner.ListCheckpoints(ctx, a.Repo, a.Store, rec.InvocationID)
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
	cp, err := runner.TakeCheckpoint(ctx, a.checkpointOptions(rec, store.CheckpointManual))
	if err != nil || cp != nil {
		return rec, cp, 0, err
	}
	latest, err := a.latestCheckpoint(ctx, rec.InvocationID)
	return rec, nil, latest, err
}

// latestCheckpoint is the highest checkpoint number whose ref exists.
func (a *App) latestCheckpoint(ctx context.Context, inv string) (int, error) {
	refs, err := a.Repo.ForEachRef(ctx, store.SnapshotRefPrefix(inv))
	if err != nil {
		return 0, gitErr(err)
	}
	max := 0
	for _, r := range refs {
		if n, ok := store.SnapshotRefNumber(inv, r.Name); ok && n > max {
			max = n
		}
	}
	return max, nil
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
	if Active(rec) {
		return nil, errs.CheckpointApplyRunning(rec.InvocationID)
	}
	if err := a.sandboxPresent(rec); err != nil {
		return nil, err
	}
	ref := store.SnapshotRef(rec.InvocationID, n)
	commit, err := a.Repo.RevParse(ctx, ref)
	if err != nil {
		if f, ferr := a.Store.ReadCheckpoints(rec.InvocationID); ferr == nil {
			for _, c := range f.Checkpoints {
				if c.ID == n {
					return nil, errs.CheckpointGone(rec.InvocationID, id)
				}
			}
		}
		return nil, errs.CheckpointNotFound(rec.InvocationID, id)
	}
	res := &ApplyResult{Invocation: rec, Applied: store.Checkpoint{ID: n, SnapshotRef: ref, SnapshotCommit: commit}}
	if list, err := runner.ListCheckpoints(ctx, a.Repo, a.Store, rec.InvocationID); err == nil {
		for _, c := range list {
			if c.ID == n {
				res.Applied = c
				res.Applied.SnapshotCommit = commit
			}
		}
	}

	// The undo checkpoint saves the files, not the index: staged content
	// that differs from its file would be lost for good.
	st, err := a.Repo.Tree(rec.SandboxPath).Status(ctx)
	if err != nil {
		return nil, gitErr(err)
	}
	var both []string
	for _, e := range st {
		if (e.Kind == gitcore.StatusChanged || e.Kind == gitcore.StatusRenamed) && len(e.XY) == 2 && e.XY[0] != '.' && e.XY[1] != '.' {
			both = append(both, e.Path)
		}
	}
	if len(both) > 0 {
		return nil, errs.CheckpointApplyStaged(rec.InvocationID, both)
	}
	o := a.checkpointOptions(rec, store.CheckpointBeforeApply)
	// Untracked files checkpoints leave out are in no checkpoint, the undo
	// one included: the rollback keeps them where they are.
	keep := runner.LeftOutPatterns(o, st)
	// Untracked files are part of what the rollback replaces: with tracked-
	// only checkpoints they would be lost, so save them too.
	o.IncludeUntracked = true
	undo, err := runner.TakeCheckpoint(ctx, o)
	if err != nil {
		var e *errs.Error
		if errors.As(err, &e) && e.Code == errs.EDenylisted {
			return nil, errs.CheckpointApplyDenylisted(e.Detail)
		}
		return nil, err
	}
	if undo != nil {
		res.Undo, res.UndoTaken = undo.ID, true
	} else if res.Undo, err = a.latestCheckpoint(ctx, rec.InvocationID); err != nil {
		return nil, err
	}

	// Log it before the files change: `undo` goes back to res.Undo.
	head, err := a.Repo.Tree(o.SandboxPath).Head(ctx)
	if err != nil {
		return nil, gitErr(err)
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

	cl, err := a.Store.LockCheckpoints(rec.InvocationID, runner.CheckpointLockTimeout)
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
