package agency

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/git-agency/git-agency/errs"
	"github.com/git-agency/git-agency/gitcore"
	"github.com/git-agency/git-agency/runner"
	"github.com/git-agency/git-agency/store"
)

// Failpoints of Undo, in order (an undo killed at any of them is finished
// by the next `undo`).
const (
	FPUndoAfterStart  = "undo:after-start"
	FPUndoAfterRef    = "undo:after-ref" // the branch moved back, not yet its files
	FPUndoAfterBranch = "undo:after-branch"
	FPUndoAfterTree   = "undo:after-tree"
	FPUndoAfterRecord = "undo:after-record"
)

// UndoResult is what `undo` did.
type UndoResult struct {
	// Seq is the undo's own number in the operation log.
	Seq int `json:"seq"`
	// Undone is the operation reversed.
	Undone store.OplogEntry `json:"undone"`
	// Resumed is set when an interrupted undo was finished.
	Resumed bool `json:"resumed"`
	// Notes say what was left alone, and why.
	Notes []string `json:"notes,omitempty"`
	// Next is the operation a further `undo` would reverse.
	Next *store.OplogEntry `json:"next,omitempty"`
}

// Oplog reads the operation log, folded: `undo --list`.
func (a *App) Oplog() (*store.Oplog, error) {
	lines, err := a.Store.ReadOplog()
	if err != nil {
		return nil, err
	}
	return store.FoldOplog(lines), nil
}

// Describe is one line saying what an operation did.
func Describe(e store.Operation) string {
	switch e.Op {
	case store.OpLand:
		return fmt.Sprintf("land %s onto %s (%s..%s)", e.InvocationID, e.Branch, ShortSHA(e.Before), ShortSHA(e.After))
	case store.OpDiscard:
		return "discard " + e.InvocationID
	case store.OpCheckpointApply:
		return fmt.Sprintf("checkpoint apply %d to %s", e.Applied, e.InvocationID)
	case store.OpWorktreeRemove:
		return fmt.Sprintf("worktree rm --force %s", e.WorktreeName)
	case store.OpUndo:
		return fmt.Sprintf("undo of #%d", e.Undoes)
	}
	return e.Op
}

// Undo is `git agency undo`: under the repo lock, reverse the newest
// operation of the log not undone yet (or finish an undo that was
// interrupted). Every refusal comes before the first change. The undo is
// logged as started before it changes anything and as done at the end;
// each step looks at what is there first, so running it again after a
// crash finishes it.
func (a *App) Undo(ctx context.Context) (*UndoResult, error) {
	lock, err := a.Lock()
	if err != nil {
		return nil, err
	}
	defer lock.Unlock()
	lines, log, target, err := a.undoTarget()
	if err != nil {
		return nil, err
	}
	res := &UndoResult{}
	if log.Interrupted != nil {
		res.Seq, res.Resumed = log.Interrupted.Seq, true
	}
	u := &undoRun{a: a, res: res, entry: target.Operation}
	if !res.Resumed {
		res.Seq = store.NextSeq(lines)
	}
	switch target.Op {
	case store.OpLand:
		err = u.land(ctx)
	case store.OpDiscard:
		err = u.discard(ctx)
	case store.OpCheckpointApply:
		err = u.checkpointApply(ctx)
	case store.OpWorktreeRemove:
		err = u.worktreeRemove(ctx)
	default:
		err = errs.Internal("operation #%d: unknown kind %q", target.Seq, target.Op)
	}
	if err != nil {
		if e := (*errs.Error)(nil); res.Resumed && errors.As(err, &e) {
			return nil, e.With(fmt.Sprintf("undo #%d of #%d was interrupted and must finish before any other undo", res.Seq, target.Seq))
		}
		return nil, err
	}
	if _, err := a.Store.AppendOperation(u.undoLine(store.UndoDone)); err != nil {
		return nil, err
	}
	res.Undone = *target
	res.Undone.UndoneBy, res.Undone.UndoState = res.Seq, store.UndoDone
	if lines, err := a.Store.ReadOplog(); err == nil {
		res.Next = store.FoldOplog(lines).Next()
	}
	return res, nil
}

// undoTarget reads the log and the operation the next undo is for: the
// one an interrupted undo must finish, else the newest not undone. The
// caller holds the repo lock.
func (a *App) undoTarget() ([]store.Operation, *store.Oplog, *store.OplogEntry, error) {
	lines, err := a.Store.ReadOplog()
	if err != nil {
		return nil, nil, nil, err
	}
	log := store.FoldOplog(lines)
	target := log.Next()
	if log.Interrupted != nil {
		target = log.Entry(log.Interrupted.Undoes)
	}
	if target == nil {
		return nil, nil, nil, errs.NothingToUndo()
	}
	return lines, log, target, nil
}

// SkipUndo is `git agency undo --skip`: under the repo lock, the newest
// operation not undone yet (the one an interrupted undo must finish,
// first) is marked skipped by an appended line, and nothing else changes:
// the next undo reaches the operation before it.
func (a *App) SkipUndo() (*UndoResult, error) {
	lock, err := a.Lock()
	if err != nil {
		return nil, err
	}
	defer lock.Unlock()
	lines, _, target, err := a.undoTarget()
	if err != nil {
		return nil, err
	}
	u := &undoRun{a: a, res: &UndoResult{Seq: store.NextSeq(lines)}, entry: target.Operation}
	if _, err := a.Store.AppendOperation(u.undoLine(store.UndoSkipped)); err != nil {
		return nil, err
	}
	res := u.res
	res.Undone = *target
	res.Undone.UndoneBy, res.Undone.UndoState = res.Seq, store.UndoSkipped
	if lines, err := a.Store.ReadOplog(); err == nil {
		res.Next = store.FoldOplog(lines).Next()
	}
	return res, nil
}

// undoRun is one undo in progress.
type undoRun struct {
	a     *App
	res   *UndoResult
	entry store.Operation
}

func (u *undoRun) resume() bool { return u.res.Resumed }

func (u *undoRun) undoLine(state string) store.Operation {
	return store.Operation{Seq: u.res.Seq, Op: store.OpUndo, Undoes: u.entry.Seq, State: state,
		InvocationID: u.entry.InvocationID, WorktreeID: u.entry.WorktreeID, WorktreeName: u.entry.WorktreeName}
}

// begin logs the undo as started: from here on, a crash is finished by the
// next undo. Every check comes before it.
func (u *undoRun) begin() error {
	if !u.resume() {
		if _, err := u.a.Store.AppendOperation(u.undoLine(store.UndoStarted)); err != nil {
			return err
		}
	}
	return u.a.fail(FPUndoAfterStart)
}

// abort logs that a started undo failed having changed nothing: it is
// not interrupted, the next undo starts afresh.
func (u *undoRun) abort() {
	u.a.Store.AppendOperation(u.undoLine(store.UndoAborted))
}

func (u *undoRun) note(format string, args ...any) {
	u.res.Notes = append(u.res.Notes, fmt.Sprintf(format, args...))
}

// what names the operation in errors.
func (u *undoRun) what() string { return fmt.Sprintf("#%d (%s)", u.entry.Seq, Describe(u.entry)) }

// invocation reads the record of the entry's invocation.
func (u *undoRun) invocation() (*store.InvocationRecord, error) {
	rec, err := u.a.Store.ReadInvocation(u.entry.InvocationID)
	if err != nil {
		if os.IsNotExist(err) {
			return nil, errs.UndoExpired(u.what(), "the record of invocation "+u.entry.InvocationID)
		}
		return nil, errs.StoreCorrupt(u.a.Store.InvocationMetaPath(u.entry.InvocationID), err)
	}
	return rec, nil
}

// checkRestore refuses a restore at path whose branch or snapshot is gone,
// whose branch moved since, or is checked out in another tree.
func (u *undoRun) checkRestore(ctx context.Context, r *store.Restore, path string) error {
	if r == nil {
		return errs.UndoExpired(u.what(), "the saved state (an entry without one)")
	}
	tip, err := u.a.Repo.RevParse(ctx, "refs/heads/"+r.Branch)
	if err != nil || r.Head == "" {
		return errs.UndoExpired(u.what(), "branch "+r.Branch)
	}
	if tip != r.Head {
		return errs.UndoBranchMoved(u.what(), r.Branch, r.Head, tip)
	}
	wts, err := u.a.Repo.Worktrees(ctx)
	if err != nil {
		return gitErr(err)
	}
	for _, w := range wts {
		if w.Branch == "refs/heads/"+r.Branch && !w.Prunable && filepath.Clean(w.Path) != filepath.Clean(path) {
			return errs.UndoBranchCheckedOut(u.what(), r.Branch, w.Path)
		}
	}
	return u.checkSnapshot(ctx, r)
}

// checkSnapshot refuses a restore whose snapshot gc removed: its ref (an
// object without one is git gc's to prune at any time) or its commit.
func (u *undoRun) checkSnapshot(ctx context.Context, r *store.Restore) error {
	if r.Commit == "" {
		return nil
	}
	missing := "snapshot " + ShortSHA(r.Commit)
	if r.Ref != "" {
		missing = r.Ref
		if got, err := u.a.Repo.RevParse(ctx, r.Ref); err != nil || got != r.Commit {
			return errs.UndoExpired(u.what(), missing)
		}
	}
	if _, err := u.a.Repo.RevParse(ctx, r.Commit); err != nil {
		return errs.UndoExpired(u.what(), missing)
	}
	return nil
}

// checkSandboxRestore refuses a sandbox restore that checkRestore refuses,
// or whose tree exists again (unless an interrupted undo made it).
func (u *undoRun) checkSandboxRestore(ctx context.Context, r *store.Restore) error {
	tree := u.a.Store.SandboxTreePath(u.entry.InvocationID)
	if err := u.checkRestore(ctx, r, tree); err != nil {
		return err
	}
	if _, err := os.Stat(tree); err == nil && !u.resume() {
		return errs.UndoTreeExists(u.what(), tree)
	}
	return nil
}

// recreateTree checks out r.Branch at path again (a tree an interrupted
// undo left half made is removed first: the undo made it from r) and puts
// the snapshot's files back, untracked ones untracked again. A non-nil
// sparse says the tree's sparse checkout, set before any file is written
// (not enabled: a full tree, whatever git copies from the main tree); nil
// leaves it to git.
func (u *undoRun) recreateTree(ctx context.Context, path string, r *store.Restore, remove func() error, sparse *gitcore.Sparse) error {
	a := u.a
	if _, err := os.Stat(path); err == nil {
		if err := remove(); err != nil {
			return err
		}
	}
	if err := a.pruneOurs(ctx, path); err != nil {
		return err
	}
	if sparse == nil {
		if err := a.Repo.WorktreeAddExisting(ctx, path, r.Branch); err != nil {
			return gitErr(err)
		}
	} else if err := a.checkoutSparse(ctx, path, r.Branch, *sparse); err != nil {
		return err
	}
	if r.Commit == "" {
		return nil
	}
	return a.resetFiles(ctx, path, r.Commit, nil) // a new checkout: nothing untracked yet
}

// checkoutSparse adds branch's tree at path with exactly sp's sparse
// checkout (none when not enabled) before checking its files out.
func (a *App) checkoutSparse(ctx context.Context, path, branch string, sp gitcore.Sparse) error {
	if err := a.Repo.WorktreeAddExistingNoCheckout(ctx, path, branch); err != nil {
		return gitErr(err)
	}
	t := a.Repo.Tree(path)
	if sp.Enabled {
		if err := t.SparseCheckoutSet(ctx, sp); err != nil {
			return gitErr(err)
		}
	} else {
		// `git worktree add` copies the main tree's patterns.
		got, err := t.SparseCheckout(ctx)
		if err != nil {
			return gitErr(err)
		}
		if got.Enabled {
			if err := t.SparseCheckoutDisable(ctx); err != nil {
				return gitErr(err)
			}
		}
	}
	return gitErr(t.CheckoutHead(ctx))
}

// resetFiles makes a tree's files those of commit's tree, with the index
// at HEAD (files the commit added are untracked again): `reset --hard`,
// `clean -fd` (never .agency/, nor what keep names: the untracked files
// checkpoints leave out), `read-tree --reset -u`, `reset`. An empty commit
// means HEAD: the tree ends clean.
func (a *App) resetFiles(ctx context.Context, path, commit string, keep []string) error {
	tree := a.Repo.Tree(path)
	steps := []func(context.Context) error{
		tree.ResetHard,
		func(ctx context.Context) error { return tree.Clean(ctx, keep, store.AgencyDir) },
	}
	if commit != "" {
		steps = append(steps, func(ctx context.Context) error { return tree.ReadTreeReset(ctx, commit) }, tree.ResetIndex)
	}
	for _, step := range steps {
		if err := step(ctx); err != nil {
			return gitErr(err)
		}
	}
	return nil
}

// recreateSandbox makes an invocation's sandbox tree again from r (then
// the failpoint after the tree).
func (u *undoRun) recreateSandbox(ctx context.Context, rec *store.InvocationRecord, r *store.Restore) error {
	a := u.a
	inv := rec.InvocationID
	tree := a.Store.SandboxTreePath(inv)
	if err := store.CheckInside(a.Store.SandboxesDir(), tree); err != nil {
		return err
	}
	if err := os.MkdirAll(a.Store.SandboxLogsDir(inv), 0o700); err != nil {
		return errs.IO("create", a.Store.SandboxLogsDir(inv), err)
	}
	// A sandbox made sparse (not --full) gets the integration tree's
	// patterns again, as a new sandbox would.
	sparse := &gitcore.Sparse{}
	if rec.Sparse {
		if wt, err := a.Store.ReadWorktree(rec.IntegrationWorktreeID); err == nil && wt.State == store.StatePresent {
			sp, err := a.Repo.Tree(wt.TreePath).SparseCheckout(ctx)
			if err != nil {
				return gitErr(err)
			}
			sparse = &sp
		}
	}
	if err := u.recreateTree(ctx, tree, r, func() error { return a.RemoveSandboxTree(ctx, rec) }, sparse); err != nil {
		return err
	}
	if err := WriteAgencyIgnore(tree); err != nil {
		return err
	}
	if state := filepath.Join(tree, store.AgencyDir, "state"); os.MkdirAll(state, 0o755) != nil {
		return errs.IO("create", state, os.ErrPermission)
	}
	if len(r.NotKept) > 0 {
		u.note("not restored (denylisted, never saved): %v", r.NotKept)
	}
	// The ignored files .worktreeinclude lists went with the tree: copy
	// them again, as into a new sandbox (a failure is only said).
	if wt, err := a.Store.ReadWorktree(rec.IntegrationWorktreeID); err == nil && wt.State == store.StatePresent {
		if err := a.includeIntoSandbox(ctx, wt, inv); err != nil {
			u.note("the files %s lists were not copied again: %s", IncludeFile, errs.As(err).Msg)
		}
	}
	return a.fail(FPUndoAfterTree)
}

// land reverses a land: the integration branch goes back to where it was
// (compare-and-swap, with a reflog message) when it still points at what
// the land made and its tree is clean; the sandbox tree is recreated from
// its branch and its saved state; the invocation is pending again.
func (u *undoRun) land(ctx context.Context) error {
	a, e := u.a, u.entry
	rec, err := u.invocation()
	if err != nil {
		return err
	}
	if s := store.Deref(rec.LandingStatus); s != store.LandingLanded && !(u.resume() && s == store.LandingPending) {
		return errs.UndoStatusChanged(rec.InvocationID, store.LandingLanded, s)
	}
	if Active(rec) {
		return errs.InvocationRunning(rec.InvocationID, "undo the land of")
	}
	wt, err := a.WorktreeByID(e.WorktreeID)
	if err != nil {
		return err
	}
	if wt.State != store.StatePresent {
		return errs.UndoNeedsTree(u.what(), wt.Name, wt.Branch, ShortSHA(e.Before), ShortSHA(e.After))
	}
	if err := a.CheckOnBranch(ctx, wt); err != nil {
		return err
	}
	integ := a.Repo.Tree(wt.TreePath)
	head, err := integ.Head(ctx)
	if err != nil {
		return gitErr(err)
	}
	// move: the branch goes back, then index and files follow it; files:
	// only index and files (an undo killed between the two).
	move, files := false, false
	switch {
	case head == e.After:
		move, files = true, true
		dirty, err := integ.HasTrackedChanges(ctx)
		if err != nil {
			return gitErr(err)
		}
		if dirty {
			return errs.UndoDirtyIntegration(wt.Name, wt.TreePath)
		}
	case head == e.Before:
		if u.resume() {
			if ok, err := integ.IndexMatches(ctx, e.After); err == nil && ok && e.After != e.Before {
				files = true
			}
		} else {
			u.note("the integration branch %s is at %s already; left alone", wt.Branch, ShortSHA(head))
		}
	default:
		if ok, err := a.Repo.IsAncestor(ctx, e.After, head); err != nil {
			return gitErr(err)
		} else if ok {
			return errs.UndoLandMoved(rec.InvocationID, wt.Branch, ShortSHA(e.Before), ShortSHA(e.After))
		}
		if !u.resume() {
			return errs.UndoLandGone(rec.InvocationID, wt.Branch)
		}
	}
	r := e.Restore
	if err := u.checkSandboxRestore(ctx, r); err != nil {
		return err
	}

	if err := u.begin(); err != nil {
		return err
	}
	// The branch first, by compare-and-swap: when someone committed since
	// the check above, it fails and nothing was touched.
	if move {
		if err := integ.MoveHead(ctx, e.After, e.Before, "agency: undo land invocation "+rec.InvocationID); err != nil {
			u.abort()
			if now, herr := integ.Head(ctx); herr == nil && now != e.After {
				return errs.UndoLandMoved(rec.InvocationID, wt.Branch, ShortSHA(e.Before), ShortSHA(e.After))
			}
			return gitErr(err)
		}
		if err := a.fail(FPUndoAfterRef); err != nil {
			return err
		}
	}
	if files {
		if err := integ.SwitchFiles(ctx, e.After, e.Before); err != nil {
			// Put the branch back: the undo leaves nothing changed.
			if move && integ.MoveHead(ctx, e.Before, e.After, "agency: undo of the land of "+rec.InvocationID+" failed; branch put back") == nil {
				u.abort()
			}
			if blocked := (*gitcore.BlockedError)(nil); errors.As(err, &blocked) {
				return errs.UndoDirtyIntegration(wt.Name, wt.TreePath).With(blocked.Paths...)
			}
			return gitErr(err)
		}
	}
	if err := a.fail(FPUndoAfterBranch); err != nil {
		return err
	}
	if err := u.recreateSandbox(ctx, rec, r); err != nil {
		return err
	}
	if _, err := a.Store.UpdateInvocationLocked(rec.InvocationID, func(r *store.InvocationRecord) error {
		r.LandingStatus = store.Str(store.LandingPending)
		r.LandedAt = nil
		r.Land = nil
		return nil
	}); err != nil {
		return err
	}
	a.Store.AppendEvent(rec.InvocationID, "land_undone", map[string]any{"undo": u.res.Seq, "operation": e.Seq,
		"before": e.Before, "after": e.After, "moved": move})
	return a.fail(FPUndoAfterRecord)
}

// discard reverses a discard: the sandbox is recreated at the checkpoint
// the discard took, and the invocation's landing status is what it was.
func (u *undoRun) discard(ctx context.Context) error {
	a, e := u.a, u.entry
	rec, err := u.invocation()
	if err != nil {
		return err
	}
	// "" is a queued invocation's: back in the queue.
	was := e.LandingStatus
	s := store.Deref(rec.LandingStatus)
	if s != store.LandingDiscarded && s != was {
		return errs.UndoStatusChanged(rec.InvocationID, store.LandingDiscarded, s)
	}
	if s == was && !u.resume() {
		// The discard failed (or was killed) after it logged itself and
		// before it marked the record: with the tree still there, there
		// is nothing to undo; without it, it is recreated.
		if _, err := os.Stat(a.Store.SandboxTreePath(rec.InvocationID)); err == nil {
			u.note("the discard of %s never finished: its sandbox is still there; nothing to undo", rec.InvocationID)
			return nil
		}
	}
	r := e.Restore
	if err := u.checkSandboxRestore(ctx, r); err != nil {
		return err
	}
	if err := u.begin(); err != nil {
		return err
	}
	if err := u.recreateSandbox(ctx, rec, r); err != nil {
		return err
	}
	if _, err := a.Store.UpdateInvocationLocked(rec.InvocationID, func(r *store.InvocationRecord) error {
		r.LandingStatus = nil
		if was != "" {
			r.LandingStatus = store.Str(was)
		}
		r.DiscardedAt = nil
		return nil
	}); err != nil {
		return err
	}
	a.Store.AppendEvent(rec.InvocationID, "discard_undone", map[string]any{"undo": u.res.Seq, "operation": e.Seq})
	return a.fail(FPUndoAfterRecord)
}

// checkpointApply reverses a `checkpoint apply`: the sandbox goes back to
// its before-apply checkpoint, if it still holds what the apply left.
func (u *undoRun) checkpointApply(ctx context.Context) error {
	a, e := u.a, u.entry
	rec, err := u.invocation()
	if err != nil {
		return err
	}
	rec = a.reconcileLocked(ctx, rec)
	if Active(rec) {
		return errs.CheckpointApplyRunning(rec.InvocationID)
	}
	if err := a.sandboxPresent(rec); err != nil {
		return err
	}
	r := e.Restore
	if r == nil {
		return errs.UndoExpired(u.what(), "the saved state (an entry without one)")
	}
	tree := a.Store.SandboxTreePath(rec.InvocationID)
	if head, err := a.Repo.Tree(tree).Head(ctx); err != nil {
		return gitErr(err)
	} else if head != r.Head {
		return errs.UndoBranchMoved(u.what(), "HEAD of the sandbox", r.Head, head)
	}
	if err := u.checkSnapshot(ctx, r); err != nil {
		return err
	}
	if !u.resume() {
		// The sandbox must hold exactly what the apply left there.
		snap, err := a.snapshotSandbox(ctx, tree, nil)
		if err != nil {
			return err
		}
		want, err := a.Repo.TreeOf(ctx, e.AppliedCommit)
		if err != nil {
			return errs.UndoExpired(u.what(), "checkpoint "+fmt.Sprint(e.Applied))
		}
		if len(snap.Denied) == 0 && snap.Tree != want {
			// The apply failed (or was killed) after it logged itself and
			// before it changed the files: nothing to undo.
			before := snap.HeadTree
			if r.Commit != "" {
				before, _ = a.Repo.TreeOf(ctx, r.Commit)
			}
			if snap.Tree == before {
				u.note("the checkpoint apply never finished: the sandbox of %s is as it was before; nothing to undo", rec.InvocationID)
				return nil
			}
		}
		if len(snap.Denied) > 0 || snap.Tree != want {
			return errs.UndoSandboxChanged(rec.InvocationID)
		}
	}
	if err := u.begin(); err != nil {
		return err
	}
	cl, err := a.Store.LockCheckpoints(rec.InvocationID, runner.CheckpointLockTimeout)
	if err != nil {
		return err
	}
	defer cl.Unlock()
	// Untracked files checkpoints leave out are in neither checkpoint: they
	// stay where they are, as the apply left them.
	st, err := a.Repo.Tree(tree).Status(ctx)
	if err != nil {
		return gitErr(err)
	}
	if err := a.resetFiles(ctx, tree, r.Commit, runner.LeftOutPatterns(a.checkpointOptions(rec, ""), st)); err != nil {
		return err
	}
	if err := a.fail(FPUndoAfterTree); err != nil {
		return err
	}
	a.Store.AppendEvent(rec.InvocationID, "checkpoint_apply_undone", map[string]any{"undo": u.res.Seq, "operation": e.Seq,
		"restored_checkpoint": r.Checkpoint})
	return nil
}

// worktreeRemove reverses a `worktree rm --force`: the integration tree is
// checked out again from its kept branch, with the uncommitted changes rm
// saved, and its record is present again. (The agents rm stopped have
// their own discard operations, newer: they are undone first, one each.)
func (u *undoRun) worktreeRemove(ctx context.Context) error {
	a, e := u.a, u.entry
	wt, err := a.WorktreeByID(e.WorktreeID)
	if err != nil {
		if errs.Is(err, errs.ENotFound) {
			return errs.UndoExpired(u.what(), "the record of worktree "+e.WorktreeID)
		}
		return err
	}
	if wt.State != store.StateArchived && !u.resume() {
		if _, err := os.Stat(wt.TreePath); err == nil {
			// rm failed (or was killed) after it logged itself and before
			// it removed the tree: nothing to undo. (Without the tree, it
			// died before archiving the record: the tree is recreated.)
			u.note("worktree rm --force %s never finished: its tree is still there; nothing to undo", wt.Name)
			return nil
		}
	}
	if !wt.Adopted {
		if err := store.CheckInside(a.Store.IntegrationWorktreeDir(wt.WorktreeID), wt.TreePath); err != nil {
			return err
		}
	}
	list, err := a.Store.ScanWorktrees()
	if err != nil {
		return errs.IO("scan", a.Store.IntegrationWorktreesDir(), err)
	}
	for _, o := range list {
		if o.Record != nil && o.ID != wt.WorktreeID && o.Record.State == store.StatePresent && o.Record.Name == wt.Name {
			return errs.NameTaken(wt.Name, o.ID)
		}
	}
	r := e.Restore
	if err := u.checkRestore(ctx, r, wt.TreePath); err != nil {
		return err
	}
	if _, err := os.Stat(wt.TreePath); err == nil && !u.resume() {
		return errs.UndoTreeExists(u.what(), wt.TreePath)
	}
	if err := u.begin(); err != nil {
		return err
	}
	remove := func() error {
		if err := a.Repo.WorktreeRemove(ctx, wt.TreePath, true); err != nil && !wt.Adopted {
			return store.RemoveAllInside(a.Store.IntegrationWorktreeDir(wt.WorktreeID), wt.TreePath)
		}
		return nil
	}
	if err := u.recreateTree(ctx, wt.TreePath, r, remove, nil); err != nil {
		return err
	}
	if err := WriteMarker(wt.TreePath); err != nil {
		return err
	}
	if len(r.NotKept) > 0 {
		u.note("not restored (denylisted or nested repositories, never saved): %v", r.NotKept)
	}
	if err := a.fail(FPUndoAfterTree); err != nil {
		return err
	}
	wt.State, wt.ArchivedAt = store.StatePresent, ""
	if err := a.Store.WriteWorktree(wt); err != nil {
		return err
	}
	return a.fail(FPUndoAfterRecord)
}

// saveSandbox saves a sandbox's state before land or discard removes its
// tree: a checkpoint of its uncommitted work, untracked files included
// (denylisted ones left out, and named). It returns what undo restores.
func (a *App) saveSandbox(ctx context.Context, rec *store.InvocationRecord, reason string) (*store.Restore, error) {
	r := &store.Restore{Branch: rec.SandboxBranch}
	if tip, err := a.Repo.RevParse(ctx, "refs/heads/"+rec.SandboxBranch); err == nil {
		r.Head = tip
	}
	tree := a.sandboxTree(rec)
	if tree == "" {
		return r, nil
	}
	o := a.checkpointOptions(rec, reason)
	o.SandboxPath = tree
	o.IncludeUntracked = true
	cp, err := runner.TakeCheckpoint(ctx, o)
	var e *errs.Error
	if errors.As(err, &e) && e.Code == errs.EDenylisted {
		r.NotKept = e.Detail
		o.Exclude = e.Detail
		cp, err = runner.TakeCheckpoint(ctx, o)
	}
	if err != nil {
		return nil, err
	}
	n := 0
	if cp != nil {
		n = cp.ID
	} else if n, err = a.latestCheckpoint(ctx, rec.InvocationID); err != nil {
		return nil, err
	}
	if n > 0 {
		// Unchanged since checkpoint n: it holds the state.
		r.Checkpoint, r.Ref = n, store.SnapshotRef(rec.InvocationID, n)
		if r.Commit, err = a.Repo.RevParse(ctx, r.Ref); err != nil {
			return nil, gitErr(err)
		}
	}
	return r, nil
}

// planUndoRefs lists the refs/agency/undo/<seq> refs gc removes: those of
// operations older than cutoff (undo keeps them until then), and those no
// operation names (a worktree rm killed before it logged itself).
func (a *App) planUndoRefs(ctx context.Context, cutoff time.Time) []GCItem {
	refs, err := a.Repo.ForEachRef(ctx, store.UndoRefPrefix)
	if err != nil || len(refs) == 0 {
		return nil
	}
	log, err := a.Oplog()
	if err != nil {
		return nil
	}
	var out []GCItem
	for _, r := range refs {
		seq, _ := strconv.Atoi(strings.TrimPrefix(r.Name, store.UndoRefPrefix))
		it := GCItem{Kind: GCUndoRef, Target: r.Name}
		e := log.Entry(seq)
		if e == nil || e.Restore == nil || e.Restore.Ref != r.Name {
			it.Reason, it.orphan = "no operation of the log needs it", true
			out = append(out, it)
			continue
		}
		when := firstTime(&e.Time)
		if when.IsZero() || when.After(cutoff) {
			continue
		}
		it.Reason = fmt.Sprintf("%s %s ago (undo can no longer restore its uncommitted changes)", Describe(e.Operation), roundAge(a.Now().Sub(when)))
		out = append(out, it)
	}
	return out
}

// undoRefNeeded tells whether an operation of the log names ref (gc looks
// again under the lock before it removes one it found orphaned).
func (a *App) undoRefNeeded(ref string) bool {
	log, err := a.Oplog()
	if err != nil {
		return true
	}
	for _, e := range log.Entries {
		if e.Restore != nil && e.Restore.Ref == ref {
			return true
		}
	}
	return false
}
