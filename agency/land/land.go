package land

import (
	"context"
	"errors"
	"path/filepath"
	"strings"

	"github.com/git-agency/git-agency/agency/internal/core"
	"github.com/git-agency/git-agency/checkpoint"
	"github.com/git-agency/git-agency/errs"
	"github.com/git-agency/git-agency/gitcore"
	"github.com/git-agency/git-agency/store"
)

// Land progress states (store.LandProgress.State).
const (
	LandInProgress  = store.LandInProgress
	LandDone        = "done"
	LandInterrupted = "interrupted"
)

// Failpoints of Land, in order.
const (
	FPLandBeforeUpdate = "land:before-update"
	FPLandAfterUpdate  = "land:after-update"
	FPLandAfterRemove  = "land:after-remove"
)

// SnapshotSandbox is the snapshot tree of a sandbox's uncommitted work,
// untracked files included, denylist applied (checked before staging),
// .agency/ and exclude left out. The same snapshot as checkpoints take.
func (a *Lander) SnapshotSandbox(ctx context.Context, tree string, exclude []string) (*gitcore.Snapshot, error) {
	snap, err := checkpoint.SnapshotTree(ctx, a.Repo, tree, true, checkpoint.DenylistFromConfig(a.Config), exclude...)
	return snap, core.GitErr(err)
}

// previewSandbox is SnapshotSandbox for the forecast: it also leaves out the
// untracked files checkpoints leave out (checkpoint.PreviewTree).
func (a *Lander) previewSandbox(ctx context.Context, rec *store.InvocationRecord, tree string) (*gitcore.Snapshot, error) {
	o := a.Host.CheckpointOptions(rec, "")
	o.SandboxPath = tree
	snap, err := checkpoint.PreviewTree(ctx, o)
	return snap, core.GitErr(err)
}

// Options are the inputs of `agent land`.
type Options struct {
	Query       string
	Apply       bool
	RequireBase bool
	// NoVerify lands without running the check (agency.verify); the
	// record says so. SendBack sends a red verify to the agent as a
	// follow-up prompt (as agency.verify.sendBack does).
	NoVerify bool
	SendBack bool
	// Batch (LandMany) verifies up to Batch stacked candidates at once.
	Batch int
}

// Result is what a land did, or (CheckLand) would do.
type Result struct {
	InvocationID string `json:"invocation_id"`
	WorktreeID   string `json:"worktree_id"`
	WorktreeName string `json:"worktree_name"`
	Branch       string `json:"branch"`
	// TargetHead is the integration HEAD the land starts from; ResultHead
	// the new HEAD ("" when the land conflicts).
	TargetHead string `json:"target_head"`
	ResultHead string `json:"result_head,omitempty"`
	// ResultTree is the tree of ResultHead: what --check predicts (its
	// result_head is left out: a prediction writes its own commits).
	ResultTree string `json:"result_tree,omitempty"`
	// Commits are the sandbox commits landed; Written the new commits on the
	// integration branch; Skipped the commits already present there.
	Commits []string `json:"commits"`
	Written []string `json:"written"`
	Skipped []string `json:"skipped,omitempty"`
	// Applied is true when the sandbox's uncommitted changes are included.
	Applied bool `json:"applied"`
	// Clean is false when the land conflicts; ConflictCommit ("" for the
	// uncommitted part) and Conflicts say where.
	Clean          bool     `json:"clean"`
	ConflictCommit string   `json:"conflict_commit,omitempty"`
	ConflictWhat   string   `json:"conflict_subject,omitempty"`
	Conflicts      []string `json:"conflicts,omitempty"`
	// IntegrationDirty (CheckLand only): land would refuse until the
	// integration tree's changes are committed or stashed.
	IntegrationDirty bool `json:"integration_dirty,omitempty"`
	// Refused (CheckLand only): land would refuse, with this error's
	// message (the integration tree is dirty, or files are in the way).
	Refused string `json:"refused,omitempty"`
	refusal error
	// Recovered notes an interrupted earlier land that this one finished.
	Note string `json:"note,omitempty"`
	// ConflictsWith (CheckLand only) are the worktree's other pending
	// invocations this one would conflict with if they landed first, as
	// the forecast says (agent ls).
	ConflictsWith []string `json:"conflicts_with,omitempty"`
	// Verify is what the check (agency.verify) said of the candidate:
	// passed, failed, or skipped (--no-verify); "" when none is set.
	// VerifyLog is its log.
	Verify    string `json:"verify,omitempty"`
	VerifyLog string `json:"verify_log,omitempty"`
	// VerifyReusedFrom: the land ran no check, reusing the pass of this
	// candidate, of tree VerifyTreeID, verified at VerifiedAt.
	VerifyReusedFrom string `json:"verify_reused_from,omitempty"`
	VerifyTreeID     string `json:"verify_tree,omitempty"`
	VerifiedAt       string `json:"verified_at,omitempty"`
	// Host names the host the agent ran on ("" for a local one): its
	// sandbox is there, and a land here leaves it as it is.
	Host string `json:"host,omitempty"`
}

// landPlan computes a land in the object database: preconditions, the
// commits, the uncommitted snapshot and the replay. Nothing is touched.
func (a *Lander) landPlan(ctx context.Context, rec *store.InvocationRecord, opts Options, check bool) (*Result, *store.WorktreeRecord, error) {
	if err := landable(rec); err != nil {
		return nil, nil, err
	}
	ahead := a.sandboxDirtyAhead(ctx, rec)
	defer ahead.stop()
	res, wt, err := a.landTarget(ctx, rec, opts, check)
	if err != nil {
		return nil, nil, err
	}
	tip, err := a.Repo.RevParse(ctx, "refs/heads/"+rec.SandboxBranch)
	if err != nil {
		return nil, nil, core.SandboxBranchMissingErr(rec)
	}
	if err := a.Host.CheckRefsLogged(rec.SandboxBranch, tip); err != nil {
		return nil, nil, err
	}
	work, err := a.landWorkAhead(ctx, rec, tip, opts.Apply, false, ahead)
	if err != nil {
		return nil, nil, err
	}
	for _, c := range work.Commits[:work.Committed] {
		res.Commits = append(res.Commits, c.ID)
	}
	res.Applied = work.Applied
	tree := a.SandboxTree(rec)
	if err := a.somethingToLand(rec, res, work.Dirty, tree, opts.Apply); err != nil {
		return nil, nil, err
	}
	if err := a.checkSubmoduleCommits(ctx, rec, wt, work.Commits, tree); err != nil {
		return nil, nil, err
	}
	writer, err := a.landWriter(ctx, rec, wt, work, check)
	if err != nil {
		return nil, nil, err
	}
	if err := a.replayLand(ctx, res, work.Commits, writer); err != nil {
		return nil, nil, err
	}
	if res.Clean && !res.IntegrationDirty {
		if err := a.checkInTheWay(ctx, res, wt, check); err != nil {
			return nil, nil, err
		}
	}
	return res, wt, nil
}

// landable refuses an invocation that was landed or discarded, or still
// runs.
func landable(rec *store.InvocationRecord) error {
	inv := rec.InvocationID
	switch store.Deref(rec.LandingStatus) {
	case store.LandingLanded:
		return errs.AlreadyLanded(inv)
	case store.LandingDiscarded:
		return errs.NothingToLandDiscarded(inv)
	}
	if rec.Active() {
		return errs.InvocationRunning(inv, "land")
	}
	return nil
}

// landTarget checks the integration worktree a land goes into (present, on
// its branch, clean: with check a dirty one is noted instead, since
// CheckLand only predicts) and starts the result with its HEAD.
func (a *Lander) landTarget(ctx context.Context, rec *store.InvocationRecord, opts Options, check bool) (*Result, *store.WorktreeRecord, error) {
	inv := rec.InvocationID
	wt, err := a.Host.WorktreeByID(rec.IntegrationWorktreeID)
	if err != nil {
		return nil, nil, err
	}
	if wt.State != store.StatePresent {
		return nil, nil, errs.ArchivedLand(wt.Name, wt.WorktreeID, inv, rec.SandboxBranch)
	}
	res := &Result{InvocationID: inv, WorktreeID: wt.WorktreeID, WorktreeName: wt.Name, Branch: wt.Branch, Host: rec.Host}
	integ := a.Repo.Tree(wt.TreePath)
	if err := a.Host.CheckOnBranch(ctx, wt); err != nil {
		return nil, nil, err
	}
	head, err := integ.Head(ctx)
	if err != nil {
		return nil, nil, core.GitErr(err)
	}
	if err := a.Host.CheckRefsLogged(wt.Branch, head); err != nil {
		return nil, nil, err
	}
	dirty, err := a.trackedChanges(ctx, integ, head, "")
	if err != nil {
		return nil, nil, core.GitErr(err)
	}
	if dirty {
		if !check {
			return nil, nil, a.Host.DirtyErr(ctx, wt.TreePath, errs.LandDirtyIntegration(wt.Name, wt.TreePath))
		}
		res.IntegrationDirty = true
		res.refuse(a.Host.DirtyErr(ctx, wt.TreePath, errs.LandDirtyIntegration(wt.Name, wt.TreePath)))
	}
	res.TargetHead = head
	if opts.RequireBase && head != rec.BaseCommit {
		return nil, nil, errs.BaseMoved(wt.Branch, rec.BaseCommit, head)
	}
	return res, wt, nil
}

// somethingToLand refuses a land with nothing to land, or whose
// uncommitted work would be left behind without --apply. dirty: the
// sandbox has uncommitted work; tree: the sandbox tree ("" when gone).
func (a *Lander) somethingToLand(rec *store.InvocationRecord, res *Result, dirty bool, tree string, apply bool) error {
	inv := rec.InvocationID
	switch {
	case len(res.Commits) == 0 && tree == "":
		return errs.NothingToLandTreeGone(inv, a.Store.SandboxTreePath(inv))
	case len(res.Commits) == 0 && !dirty:
		return errs.NothingToLand(inv)
	case len(res.Commits) == 0 && !apply:
		return errs.NoCommitsUseApply(inv)
	case dirty && !apply:
		return errs.UnlandedChanges(inv)
	}
	return nil
}

// replayLand replays commits onto res.TargetHead in the object database
// and fills in the result: clean with its new head, or the conflict (the
// commit, "" for the uncommitted part, and the files).
func (a *Lander) replayLand(ctx context.Context, res *Result, commits []gitcore.Commit, w gitcore.Writer) error {
	rp, err := a.Repo.Replay(ctx, res.TargetHead, commits, w)
	if err != nil {
		return landCommitErr(res.InvocationID, err)
	}
	if rp.Conflict != nil {
		res.Conflicts = rp.Conflict.Files
		if !(res.Applied && rp.Conflict.Commit.ID == commits[len(commits)-1].ID) {
			res.ConflictCommit = rp.Conflict.Commit.ID
			res.ConflictWhat = rp.Conflict.Commit.Subject
		}
		return nil
	}
	res.Clean = true
	res.ResultHead = rp.Tip
	res.Written = rp.Written
	res.Skipped = rp.Skipped
	return nil
}

// checkInTheWay refuses (with check: notes) files in the integration tree
// in the way of the fast-forward, as land would, before anything is
// touched.
func (a *Lander) checkInTheWay(ctx context.Context, res *Result, wt *store.WorktreeRecord, check bool) error {
	paths, err := a.Repo.Tree(wt.TreePath).BlockingPaths(ctx, res.TargetHead, res.ResultHead)
	if err != nil {
		return core.GitErr(err)
	}
	if len(paths) == 0 {
		return nil
	}
	e := errs.LandFilesInTheWay(res.InvocationID, wt.TreePath, paths)
	if !check {
		return e
	}
	res.refuse(e)
	return nil
}

// refuse records (CheckLand) that land would refuse with err.
func (r *Result) refuse(err error) {
	if r.refusal == nil {
		r.refusal, r.Refused = err, errs.As(err).Msg
	}
}

// Refusal is the error land would refuse with (CheckLand), or nil.
func (r *Result) Refusal() error { return r.refusal }

// Work is what a land of rec would replay.
type Work struct {
	// Commits are replayed in order: the sandbox's commits base..tip, then
	// (Applied) one commit of its uncommitted work.
	Commits []gitcore.Commit
	// Committed is how many of Commits are the sandbox's own.
	Committed int
	// Dirty: the sandbox tree holds uncommitted changes.
	Dirty   bool
	Applied bool
}

// Work collects the commits a land of rec (its branch at tip) replays
// and, with apply, a commit of the sandbox's snapshot tree (untracked files
// included, denylist applied) on top. It writes only unreferenced objects;
// land, land --check and the forecast share it.
//
// preview (the forecast, a read path) snapshots with previewSandbox.
func (a *Lander) Work(ctx context.Context, rec *store.InvocationRecord, tip string, apply, preview bool) (*Work, error) {
	return a.landWorkAhead(ctx, rec, tip, apply, preview, nil)
}

// landWorkAhead is Work taking the sandbox's dirty check from ahead
// (sandboxDirtyAhead) when it judged the same tip.
func (a *Lander) landWorkAhead(ctx context.Context, rec *store.InvocationRecord, tip string, apply, preview bool, ahead *dirtyAhead) (*Work, error) {
	inv := rec.InvocationID
	commits, err := a.Repo.Commits(ctx, rec.BaseCommit, tip)
	if err != nil {
		return nil, core.GitErr(err)
	}
	w := &Work{Commits: commits, Committed: len(commits)}
	tree := a.SandboxTree(rec)
	if tree != "" {
		if w.Dirty, err = a.sandboxState(ctx, rec, tree, commits, tip, ahead); err != nil {
			return nil, err
		}
	}
	if a.hostApplied(ctx, rec, w, tip, tree, apply) {
		return w, nil // the host made it a commit (HostApplyAll)
	}
	if !w.Dirty || !apply {
		return w, nil
	}
	var snap *gitcore.Snapshot
	if preview {
		snap, err = a.previewSandbox(ctx, rec, tree)
	} else {
		snap, err = a.SnapshotSandbox(ctx, tree, nil)
	}
	if err != nil {
		return nil, err
	}
	if len(snap.Denied) > 0 {
		return nil, errs.LandDenylisted(inv, snap.Denied)
	}
	if len(snap.Nested) > 0 {
		return nil, errs.LandNestedRepo(inv, snap.Nested)
	}
	changed, err := a.Repo.DiffNames(ctx, snap.Head, snap.Tree)
	if err != nil {
		return nil, core.GitErr(err)
	}
	if len(changed) == 0 {
		w.Dirty = false // only stat or ignored noise
		return w, nil
	}
	msg := "agency: land invocation " + inv + "\n"
	u, err := a.Repo.WriteCommit(ctx, snap.Tree, []string{snap.Head}, msg, nil, gitcore.Writer{})
	if err != nil {
		return nil, core.GitErr(err)
	}
	// No author: the replay writes it as the user (or, predicting, as
	// git-agency). Land gives it its title (landMessage).
	w.Commits = append(w.Commits, gitcore.Commit{ID: u, Parents: []string{snap.Head}, Tree: snap.Tree,
		Subject: strings.TrimSpace(msg), Message: msg})
	w.Applied = true
	return w, nil
}

// Land is `agent land`: under the repo lock, replay the sandbox's commits
// (and with Apply its uncommitted work, untracked files included) onto the
// integration tree's current HEAD, then fast-forward the integration tree
// in one step. A conflict touches nothing and fails with E_LAND_CONFLICT.
// Progress is recorded in the record's `land` so an interrupted land is
// finished or reported on the next read and never applied twice.
func (a *Lander) Land(ctx context.Context, opts Options) (*Result, error) {
	found, err := a.Host.ResolveInvocation(opts.Query)
	if err != nil {
		return nil, err
	}
	// Repair a record whose supervisor died before judging it running.
	interrupted := found.Land != nil && found.Land.State == LandInProgress
	found = a.Host.Reconcile(ctx, found)
	if interrupted && store.Deref(found.LandingStatus) == store.LandingLanded {
		// The repair finished the interrupted land this one retries.
		return a.landDoneResult(found, found.Land.Note), nil
	}
	// Notifications run once the lock is released (deferred first, so
	// run last).
	defer a.flushNotify(ctx)
	if command := a.landVerifyCommand(found, opts); command != "" {
		return a.landVerified(ctx, found.InvocationID, opts, command)
	}
	ctx, unlock, err := a.LockWork(ctx)
	if err != nil {
		return nil, err
	}
	defer unlock()
	rec, done, note, err := a.landBeginLocked(ctx, found.InvocationID)
	if err != nil || done != nil {
		return done, err
	}
	res, wt, err := a.landPlan(ctx, rec, opts, false)
	if err != nil {
		return nil, err
	}
	res.Note = note
	if !res.Clean {
		return res, a.landConflict(res)
	}
	if opts.NoVerify && a.VerifyCommand(wt) != "" {
		res.Verify = VerifySkipped
	}
	return res, a.commitLandLocked(ctx, rec, wt, res)
}

// landReflog is the integration branch's reflog message for a land.
func landReflog(inv string) string { return "agency: land invocation " + inv }

// fastForwardFailedLocked handles a fast-forward of the integration tree
// that failed. When nothing was applied (git refused up front) the attempt
// is forgotten; otherwise the record says what state the tree was left in.
// It returns the error to report: git's, as E_DIRTY_WORKTREE when files in
// the tree were in the way, with what the record update could not do.
func (a *Lander) fastForwardFailedLocked(ctx context.Context, rec *store.InvocationRecord, wt *store.WorktreeRecord, target string, ffErr error) error {
	inv := rec.InvocationID
	report := core.GitErr(ffErr)
	if ge := (*gitcore.GitError)(nil); !errors.As(ffErr, &ge) {
		report = errs.LandFastForwardFailed(inv, ffErr)
	}
	if blocked := (*gitcore.BlockedError)(nil); errors.As(ffErr, &blocked) {
		report = errs.LandWouldOverwrite(inv, wt.TreePath, core.GitErr(blocked.Err))
	}
	integ := a.Repo.Tree(wt.TreePath)
	head, herr := integ.Head(ctx)
	same, serr := integ.IndexMatches(ctx, target)
	dirty, derr := integ.HasTrackedChanges(ctx)
	var cleanup error
	if herr == nil && serr == nil && derr == nil && head == target && same && !dirty {
		_, cleanup = a.Store.UpdateInvocationLocked(inv, func(r *store.InvocationRecord) error { r.Land = nil; return nil })
	} else {
		_, cleanup = a.RecoverLandLocked(ctx, rec)
	}
	if cleanup != nil {
		return errs.LandRecordNotUpdated(report, a.Store.InvocationMetaPath(inv), cleanup)
	}
	return report
}

// finishLandLocked does the post-land steps once the integration branch
// holds the landed commits: remove the sandbox tree (its branch and
// checkpoint refs are kept), mark the record landed, touch the worktree's
// last_used_at, write an event. Every step is idempotent.
func (a *Lander) finishLandLocked(ctx context.Context, rec *store.InvocationRecord, note string) (*store.InvocationRecord, error) {
	if err := a.Host.RetireSandboxTree(ctx, rec); err != nil {
		return nil, err
	}
	if err := a.Fail(FPLandAfterRemove); err != nil {
		return nil, err
	}
	if err := a.logLandLocked(ctx, rec); err != nil {
		return nil, err
	}
	rec, err := a.Store.UpdateInvocationLocked(rec.InvocationID, func(r *store.InvocationRecord) error {
		r.LandingStatus = store.Str(store.LandingLanded)
		r.LandedAt = store.Str(a.Stamp())
		if r.Land != nil {
			r.Land.State = LandDone
			r.Land.Note = note
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if wt, err := a.Store.ReadWorktree(rec.IntegrationWorktreeID); err == nil {
		wt.LastUsedAt = a.Stamp()
		if err := a.Store.WriteWorktree(wt); err != nil {
			return nil, err
		}
	}
	data := map[string]any{"worktree_id": rec.IntegrationWorktreeID}
	if rec.Land != nil {
		data["target_head"], data["result_head"], data["commits"], data["applied"] = rec.Land.TargetHead, rec.Land.ResultHead, rec.Land.Commits, rec.Land.Applied
	}
	if note != "" {
		data["note"] = note
	}
	a.Event(rec.InvocationID, "landed", data)
	return rec, nil
}

// logLandLocked appends the land to the operation log, once (finishing an
// interrupted land logs it too): before and after of the integration
// branch, and the sandbox's saved state.
func (a *Lander) logLandLocked(ctx context.Context, rec *store.InvocationRecord) error {
	p := rec.Land
	if p == nil || p.ResultHead == "" {
		return nil
	}
	op := store.Operation{Op: store.OpLand, Key: "land:" + rec.InvocationID + ":" + p.ResultHead,
		InvocationID: rec.InvocationID, WorktreeID: rec.IntegrationWorktreeID,
		Before: p.TargetHead, After: p.ResultHead, Restore: p.Restore}
	if wt, err := a.Store.ReadWorktree(rec.IntegrationWorktreeID); err == nil {
		op.WorktreeName, op.Branch = wt.Name, wt.Branch
	}
	if op.Restore == nil {
		// A land begun before it saved anything: its branch, clean.
		op.Restore = &store.Restore{Branch: rec.SandboxBranch}
		if tip, err := a.Repo.RevParse(ctx, "refs/heads/"+rec.SandboxBranch); err == nil {
			op.Restore.Head = tip
		}
	}
	_, err := a.Store.AppendOperation(op)
	return err
}

// checkSandboxHead refuses a sandbox whose HEAD left its branch with commits
// the branch does not hold (an agent that checked out --detach, or another
// branch, and committed there): landing would skip them and removing the
// sandbox would lose them.
func (a *Lander) checkSandboxHead(ctx context.Context, rec *store.InvocationRecord, tree, tip string) error {
	as, err := a.SandboxAstray(ctx, rec, tree, tip)
	if err != nil || as == nil {
		return err
	}
	return errs.SandboxHeadAstray(rec.InvocationID, as.Where)
}

// checkSubmoduleCommits refuses a land that would point a submodule at a
// commit only the sandbox holds: an agent that committed inside a submodule
// of its sandbox made that commit in the sandbox's own submodule repository
// (.git/worktrees/<x>/modules/<name>), which goes with the sandbox. Such a
// commit is fine when the integration tree's submodule, or the main
// repository's .git/modules/<path>, has it too, or when it is on a
// remote-tracking branch of the sandbox's submodule (it was pushed).
func (a *Lander) checkSubmoduleCommits(ctx context.Context, rec *store.InvocationRecord, wt *store.WorktreeRecord, commits []gitcore.Commit, tree string) error {
	if len(commits) == 0 {
		return nil
	}
	links, err := a.Repo.GitlinkChanges(ctx, rec.BaseCommit, commits[len(commits)-1].ID)
	if err != nil {
		return core.GitErr(err)
	}
	for _, l := range links {
		if a.Repo.SubmoduleHas(ctx, filepath.Join(wt.TreePath, l.Path), l.Commit) ||
			a.Repo.SubmoduleHas(ctx, filepath.Join(a.Repo.CommonDir, "modules", l.Path), l.Commit) {
			continue
		}
		if tree != "" && a.Repo.SubmodulePublished(ctx, filepath.Join(tree, l.Path), l.Commit) {
			continue
		}
		sandbox := tree
		if sandbox == "" {
			sandbox = a.Store.SandboxTreePath(rec.InvocationID)
		}
		return errs.LandSubmoduleUnpublished(rec.InvocationID, l.Path, l.Commit, sandbox)
	}
	return nil
}
