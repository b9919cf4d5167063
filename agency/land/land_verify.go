package land

import (
	"context"
	"errors"
	"os"
	"time"

	"github.com/git-agency/git-agency/agency/internal/core"
	"github.com/git-agency/git-agency/errs"
	"github.com/git-agency/git-agency/runner"
	"github.com/git-agency/git-agency/store"
)

// VerifySkipped is Result.Verify for a land with --no-verify.
const VerifySkipped = "skipped"

// landVerifyCommand is the check a land of rec runs: none with --no-verify
// or when neither agency.verify nor its worktree's own is set.
func (a *Lander) landVerifyCommand(rec *store.InvocationRecord, opts Options) string {
	if opts.NoVerify {
		return ""
	}
	wt, err := a.Store.ReadWorktree(rec.IntegrationWorktreeID)
	if err != nil {
		return ""
	}
	return a.VerifyCommand(wt)
}

// candidate is a land planned and being verified: the result it would
// make, on what, and the sandbox branch's tip it was built from.
type candidate struct {
	rec    *store.InvocationRecord
	wt     *store.WorktreeRecord
	res    *Result
	tip    string
	tree   string // the verify tree
	treeID string // the candidate's git tree
	// inBatch: one of a stack (landBatched), which notifies only the
	// culprit of a red stack.
	inBatch bool
	command string
	// key is the reuse key of a pass of this candidate (verifyKey).
	key   string
	began time.Time
	// slot: the host of agency.verify.hosts its check starts at, plus
	// one (0: the one its id picks); ranOn: the host it ran on ("": here).
	slot  int
	ranOn string
	// passed: its own check passed in this batch (verifyStacked).
	passed bool
	// done: nothing to verify (a land found complete, or a candidate
	// whose tree passed already and was landed); res and err are final.
	done bool
}

// landVerified is a land with a check: the candidate (the integration
// HEAD with the invocation's work replayed) is built in a verify tree and
// checked there with no lock held; only when it passes does the branch
// move, by compare-and-swap from the HEAD the candidate was built on. When
// that HEAD moved meanwhile the candidate is built and checked again, at
// most verifyRebuilds times more.
func (a *Lander) landVerified(ctx context.Context, inv string, opts Options, command string) (*Result, error) {
	timeout, err := a.VerifyTimeout()
	if err != nil {
		return nil, err
	}

	for try := 1; ; try++ {
		c, err := a.startVerify(ctx, inv, opts, command)
		if err != nil || c.done {
			if c != nil {
				return c.res, err
			}
			return nil, err
		}

		if err := a.makeClaimedTree(ctx, c); err != nil {
			return nil, err
		}

		out := a.runVerifyCandidate(ctx, c, timeout)
		res, moved, err := a.endVerify(ctx, c, out)
		if err != nil && errs.As(err).Code == errs.EVerifyFailed {
			err = sentBack(err, c.rec.InvocationID, a.sendBackIfAsked(ctx, c.rec.InvocationID, opts))
		}
		if !moved {
			return res, err
		}
		if try > verifyRebuilds {
			return nil, errs.HeadMoving(inv, c.wt.Branch, try)
		}
	}
}

// runVerifyCandidate runs the check on c (no lock held).
func (a *Lander) runVerifyCandidate(ctx context.Context, c *candidate, timeout time.Duration) runner.VerifyOutcome {
	if err := a.Fail(FPVerifyRunning); err != nil {
		return runner.VerifyOutcome{Error: errs.As(err).Msg}
	}
	// agency.verify.hosts: on a host when one answers.
	out, name, ok := a.Host.VerifyOnHosts(ctx, c.rec.InvocationID, c.res.ResultHead, c.command, timeout, c.slot-1)
	if ok {
		c.ranOn = name
		return out
	}
	c.ranOn = ""
	return a.runVerify(ctx, c.rec, c.tree, c.command, timeout)
}

// startVerify plans inv's land under the repo lock and, when it is clean,
// makes its verify tree and records the verify running. A candidate whose
// tree passed the same check already is landed at once (c.done).
func (a *Lander) startVerify(ctx context.Context, inv string, opts Options, command string) (*candidate, error) {
	ctx, unlock, err := a.LockWork(ctx)
	if err != nil {
		return nil, err
	}
	defer unlock()
	rec, done, note, err := a.landBeginLocked(ctx, inv)
	if err != nil || done != nil {
		return &candidate{res: done, done: true}, err
	}
	if verifyLive(rec) {
		return nil, errs.VerifyRunning(inv, *rec.VerifyPID)
	}

	res, wt, err := a.landPlan(ctx, rec, opts, false)
	if err != nil {
		return nil, err
	}

	res.Note = note
	if !res.Clean {
		return &candidate{res: res, done: true}, a.landConflict(res)
	}

	c := &candidate{rec: rec, wt: wt, res: res, command: command}
	if c.tip, err = a.Repo.RevParse(ctx, "refs/heads/"+rec.SandboxBranch); err != nil {
		return nil, core.SandboxBranchMissingErr(rec)
	}

	treeID, err := a.Repo.TreeOf(ctx, res.ResultHead)
	if err != nil {
		return nil, core.GitErr(err)
	}

	include, err := a.Host.SandboxIncludes(ctx, wt)
	if err != nil {
		return nil, err
	}

	c.treeID, c.key = treeID, a.verifyKey(wt, include, treeID, res.TargetHead, command)
	if rec.VerifyStatus == store.VerifyPassed && rec.VerifyKey == c.key {
		// The same files passed the same check, set up the same way, on
		// the same tip: land them, and say so.
		c.done = true
		return c, a.landReusedLocked(ctx, rec, c)
	}

	return c, a.claimVerifyLocked(c)
}

// landReusedLocked lands c on the pass rec records for the same key, and
// records that the pass was reused (verify_reused_from: the candidate
// that passed).
func (a *Lander) landReusedLocked(ctx context.Context, rec *store.InvocationRecord, c *candidate) error {
	res := c.res
	res.Verify, res.VerifyLog = store.VerifyPassed, rec.VerifyLog
	res.VerifyReusedFrom, res.VerifiedAt, res.VerifyTreeID = rec.VerifyCommit, rec.VerifyStartedAt, c.treeID
	rec, err := a.Store.UpdateInvocationLocked(rec.InvocationID, func(r *store.InvocationRecord) error {
		r.VerifyReusedFrom = r.VerifyCommit
		return nil
	})
	if err != nil {
		return err
	}

	a.Event(rec.InvocationID, "verify_reused", map[string]any{"candidate": rec.VerifyCommit, "key": c.key})
	return a.commitLandLocked(ctx, rec, c.wt, res)
}

// claimVerifyLocked records c's verify running (by this process), which
// keeps other lands of it off (E_VERIFY_RUNNING) while its tree is made
// and checked with no lock held.
func (a *Lander) claimVerifyLocked(c *candidate) error {
	inv, res := c.rec.InvocationID, c.res
	var err error
	pid := os.Getpid()
	c.began = a.Now()
	c.rec, err = a.Store.UpdateInvocationLocked(inv, func(r *store.InvocationRecord) error {
		r.VerifyStatus, r.VerifyCommand, r.VerifyLog = store.VerifyRunning, c.command, a.Store.VerifyLogPath(inv)
		r.VerifyCommit, r.VerifyOnto, r.VerifyTree = res.ResultHead, res.TargetHead, c.treeID
		r.VerifyExitCode, r.VerifyError, r.VerifyDurationMS = nil, "", 0
		r.VerifyStartedAt, r.VerifyHost = a.Stamp(), ""
		r.VerifyPID, r.VerifyPIDStartTime = &pid, runner.StartTimeOf(pid)
		return nil
	})
	if err != nil {
		return err
	}

	a.Event(inv, "verify_started", map[string]any{"command": c.command, "candidate": res.ResultHead, "onto": res.TargetHead})
	return nil
}

// makeClaimedTree makes the verify tree of c, claimed under the lock,
// with no lock held: a worktree add and the include copy would block
// every other command meanwhile. When it fails, the claim is taken back.
func (a *Lander) makeClaimedTree(ctx context.Context, c *candidate) error {
	var err error
	if c.tree, err = a.makeVerifyTree(ctx, c.wt, c.rec.InvocationID, c.res.ResultHead); err == nil {
		return nil
	}

	inv := c.rec.InvocationID
	uerr := a.lockedDo(ctx, func(context.Context) error {
		_, e := a.Store.UpdateInvocationLocked(inv, func(r *store.InvocationRecord) error {
			r.VerifyStatus, r.VerifyPID, r.VerifyPIDStartTime = "", nil, nil
			return nil
		})
		return e
	})
	return core.WithCleanup(err, uerr)
}

// endVerify records how c's verify ended, under the repo lock. A failed
// one keeps its tree and is E_VERIFY_FAILED. A passed one lands, unless
// the integration HEAD or the sandbox branch moved since the candidate was
// built: then moved is true and the caller builds it again.
func (a *Lander) endVerify(ctx context.Context, c *candidate, out runner.VerifyOutcome) (*Result, bool, error) {
	if err := a.Fail(FPVerifyPassed); err != nil && out.Passed {
		return nil, false, err
	}

	var res *Result
	var moved bool
	err := a.lockedDo(ctx, func(ctx context.Context) error {
		rec, err := a.recordVerifyLocked(ctx, c, out)
		if err != nil {
			res = c.res
			return err
		}
		res, moved, err = a.landVerifiedLocked(ctx, c, rec)
		return err
	})
	a.removePassedTree(ctx, c, out)
	return res, moved, err
}

// removePassedTree removes a passed verify's tree, with no lock held (a
// failed one's is kept for inspection).
func (a *Lander) removePassedTree(ctx context.Context, c *candidate, out runner.VerifyOutcome) {
	if !out.Passed {
		return
	}
	if err := a.RemoveVerifyTree(ctx, c.rec.InvocationID); err != nil {
		a.Warning(c.rec.InvocationID, err)
	}
}

// recordVerifyLocked records how c's verify ended: a failed one keeps its
// tree, is notified and is E_VERIFY_FAILED; a passed one's tree goes.
func (a *Lander) recordVerifyLocked(ctx context.Context, c *candidate, out runner.VerifyOutcome) (*store.InvocationRecord, error) {
	inv := c.rec.InvocationID
	status := outcomeStatus(out)
	rec, err := a.Store.UpdateInvocationLocked(inv, func(r *store.InvocationRecord) error {
		r.VerifyStatus, r.VerifyExitCode, r.VerifyError = status, out.ExitCode, out.Error
		r.VerifyDurationMS, r.VerifyHost = durationMS(out.Duration), c.ranOn
		r.VerifyPID, r.VerifyPIDStartTime = nil, nil
		r.VerifyReusedFrom, r.VerifiedAsPartOf, r.VerifyKey = "", "", ""
		if out.Passed {
			r.VerifyKey = c.key
		}
		return nil
	})
	if err != nil {
		return nil, err
	}

	c.res.Verify, c.res.VerifyLog = status, rec.VerifyLog
	data := map[string]any{"candidate": c.res.ResultHead, "exit_code": out.ExitCode, "duration_ms": rec.VerifyDurationMS}
	if c.ranOn != "" {
		data["host"] = c.ranOn
	}
	switch status {
	case store.VerifyPassed:
	case store.VerifyFailed:
		data["error"] = out.Error
		a.Event(inv, "verify_failed", data)
		if !c.inBatch {
			a.notifyLand(ctx, rec, NotifyVerifyFailed, "verify failed", out.Error)
		}
		return rec, errs.VerifyFailed(inv, out.Error, rec.VerifyLog, c.tree)
	case store.VerifyCancelled:
		data["error"] = out.Error
		a.Event(inv, "verify_cancelled", data)
		return rec, errs.VerifyCancelled(inv, out.Error, rec.VerifyLog)
	default:
		data["error"] = out.Error
		a.Event(inv, "verify_error", data)
		return rec, errs.VerifyBroken(inv, out.Error, c.command, rec.VerifyLog)
	}

	a.Event(inv, "verify_passed", data)
	return rec, nil
}

// outcomeStatus is the record's verify_status of a verify that ended
// (error when the runner could not say: a failpoint, no wall).
func outcomeStatus(out runner.VerifyOutcome) string {
	switch {
	case out.Passed:
		return store.VerifyPassed
	case out.Status == "":
		return store.VerifyErrored
	}
	return out.Status
}

// durationMS is d in whole milliseconds, at least 1 for a verify that
// took any time (the record leaves out 0).
func durationMS(d time.Duration) int64 {
	if ms := d.Milliseconds(); ms > 0 || d <= 0 {
		return ms
	}
	return 1
}

// landVerifiedLocked lands c's verified candidate, or reports moved when
// it is no longer what a land would make: the sandbox branch moved, or
// the gate (gateLocked) found the integration branch moved.
func (a *Lander) landVerifiedLocked(ctx context.Context, c *candidate, rec *store.InvocationRecord) (*Result, bool, error) {
	if err := landable(rec); err != nil {
		return nil, false, err
	}
	if rec.Land != nil && rec.Land.State == LandInProgress {
		return nil, true, nil // another land began meanwhile: plan again
	}

	tip, err := a.Repo.RevParse(ctx, "refs/heads/"+rec.SandboxBranch)
	if err != nil {
		return nil, false, core.SandboxBranchMissingErr(rec)
	}

	if tip != c.tip {
		a.Event(rec.InvocationID, "verify_rebuild", map[string]any{"onto": c.res.TargetHead, "sandbox_tip": tip})
		return nil, true, nil
	}

	err = a.commitLandLocked(ctx, rec, c.wt, c.res)
	if errors.Is(err, errHeadMoved) {
		a.Event(rec.InvocationID, "verify_rebuild", map[string]any{"onto": c.res.TargetHead})
		return nil, true, nil
	}

	if err != nil {
		return nil, false, err
	}

	return c.res, false, nil
}
