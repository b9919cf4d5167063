package land

import (
	"context"
	"errors"
	"time"

	"github.com/git-agency/git-agency/agency/internal/core"
	"github.com/git-agency/git-agency/errs"
	"github.com/git-agency/git-agency/store"
)

// landBatched is LandMany with opts.Batch: up to Batch invocations of one
// worktree are planned as a stack (each replayed on top of the one before
// it) and only the top of the stack is verified. When it passes, the whole
// stack lands, each invocation its own land. When it fails, the stack is
// bisected (as bors does) to find the longest green prefix, which lands,
// and the first red candidate, the culprit, which stays pending; the ones
// after it are stacked again in the next batch.
func (a *Lander) landBatched(ctx context.Context, ids []string, opts Options) []Outcome {
	timeout, err := a.VerifyTimeout()
	var out []Outcome
	queue := a.resolveAll(ids, &out)
	if err != nil {
		return append(out, refuseAll(queue, err)...)
	}

	moves := 0
	for len(queue) > 0 {
		stack, rest, skipped, err := a.buildStack(ctx, queue, opts)
		out = append(out, skipped...)
		if err != nil {
			return append(out, refuseAll(queue, err)...)
		}

		if len(stack) == 0 {
			queue = rest
			continue
		}

		green, culprit, err := a.verifyStack(ctx, stack, timeout)
		n := 0
		if err == nil {
			var landed []Outcome
			landed, n, err = a.landStack(ctx, stack[:green])
			out = append(out, landed...)
		}

		if errors.Is(err, errHeadMoved) {
			if moves++; moves > verifyRebuilds {
				return append(out, refuseAll(append(idsOf(stack[n:]), rest...), errs.HeadMoving(stack[0].rec.InvocationID, stack[0].wt.Branch, moves))...)
			}
			queue = append(idsOf(stack[n:]), rest...)
			continue
		}

		if err != nil {
			return append(out, refuseAll(append(idsOf(stack[n:]), rest...), err)...)
		}

		if n < green {
			// One of the prefix did not land: the rest was built on it.
			queue = append(idsOf(stack[n:]), rest...)
			continue
		}

		queue = rest
		if culprit >= 0 {
			c := stack[culprit]
			a.notifyLand(ctx, c.rec, NotifyVerifyFailed, "verify failed", c.rec.VerifyError)
			a.flushNotify(ctx)
			red := errs.VerifyFailed(c.rec.InvocationID, c.rec.VerifyError, c.rec.VerifyLog, c.tree)
			out = append(out, outcomeOf(c.rec.InvocationID, c.res, sentBack(red, c.rec.InvocationID, a.sendBackIfAsked(ctx, c.rec.InvocationID, opts))))
			queue = append(idsOf(stack[culprit+1:]), rest...)
		}
	}

	a.flushNotify(ctx)
	return out
}

// errHeadMoved: the integration branch moved while a stack was verified.
var errHeadMoved = errs.New(errs.EHeadMoving, "", "the integration branch moved")

// resolveAll resolves ids to invocation ids; one that does not resolve is
// a refused outcome.
func (a *Lander) resolveAll(ids []string, out *[]Outcome) []string {
	var queue []string
	for _, id := range ids {
		rec, err := a.Host.ResolveInvocation(id)
		if err != nil {
			*out = append(*out, outcomeOf(id, nil, err))
			continue
		}
		queue = append(queue, rec.InvocationID)
	}
	return queue
}

func refuseAll(ids []string, err error) []Outcome {
	var out []Outcome
	for _, id := range ids {
		out = append(out, outcomeOf(id, nil, err))
	}
	return out
}

func idsOf(stack []*candidate) []string {
	var ids []string
	for _, c := range stack {
		ids = append(ids, c.rec.InvocationID)
	}
	return ids
}

// buildStack plans, under the repo lock, up to opts.Batch invocations of
// queue (all of the first one's worktree) on top of each other from the
// integration HEAD. One that does not plan (a conflict with the ones
// before it, a refusal) is a skipped outcome. rest is what was not taken.
func (a *Lander) buildStack(ctx context.Context, queue []string, opts Options) (stack []*candidate, rest []string, skipped []Outcome, err error) {
	ctx, unlock, err := a.LockWork(ctx)
	if err != nil {
		return nil, queue, nil, err
	}
	defer unlock()
	onto, wtID, command := "", "", ""
	i := 0
	for ; i < len(queue) && len(stack) < opts.Batch; i++ {
		inv := queue[i]
		c, err := a.planStacked(ctx, inv, opts, onto)
		if c != nil && wtID != "" && c.rec.IntegrationWorktreeID != wtID {
			break // the next worktree's, for a later batch
		}

		if err != nil || c.done {
			res := (*Result)(nil)
			if c != nil {
				res = c.res
			}
			skipped = append(skipped, outcomeOf(inv, res, err))
			continue
		}

		if command == "" {
			command, wtID = a.VerifyCommand(c.wt), c.rec.IntegrationWorktreeID
		}

		c.command, c.inBatch = command, true
		stack = append(stack, c)
		onto = c.res.ResultHead
	}

	return stack, queue[i:], skipped, nil
}

// planStacked plans inv's land onto onto ("" for the integration HEAD).
// c.done with no error is a land found complete; a conflict is an error.
func (a *Lander) planStacked(ctx context.Context, inv string, opts Options, onto string) (*candidate, error) {
	rec, done, note, err := a.landBeginLocked(ctx, inv)
	if err != nil || done != nil {
		return &candidate{rec: rec, res: done, done: true}, err
	}
	if verifyLive(rec) {
		return nil, errs.VerifyRunning(inv, *rec.VerifyPID)
	}

	o := opts
	o.Query = inv
	res, wt, err := a.landPlan(ctx, rec, o, false)
	if err != nil {
		return nil, err
	}

	res.Note = note
	c := &candidate{rec: rec, wt: wt, res: res}
	if c.tip, err = a.Repo.RevParse(ctx, "refs/heads/"+rec.SandboxBranch); err != nil {
		return nil, core.SandboxBranchMissingErr(rec)
	}

	if res.Clean && onto != "" && onto != res.TargetHead {
		work, err := a.Work(ctx, rec, c.tip, opts.Apply, false)
		if err != nil {
			return nil, err
		}

		*res = Result{InvocationID: res.InvocationID, WorktreeID: res.WorktreeID, WorktreeName: res.WorktreeName,
			Branch: res.Branch, TargetHead: onto, Commits: res.Commits, Applied: work.Applied, Note: note, Host: res.Host}
		writer, err := a.landWriter(ctx, rec, wt, work, false)
		if err != nil {
			return nil, err
		}
		if err := a.replayLand(ctx, res, work.Commits, writer); err != nil {
			return nil, err
		}
	}

	if !res.Clean {
		return c, a.landConflict(res)
	}
	if c.treeID, err = a.Repo.TreeOf(ctx, res.ResultHead); err != nil {
		return nil, core.GitErr(err)
	}

	return c, nil
}

// verifyStacked verifies one candidate of a stack (the prefix ending with
// it): its verify tree and record are made under the lock, the check runs
// without it.
func (a *Lander) verifyStacked(ctx context.Context, c *candidate, timeout time.Duration) (bool, error) {
	if err := a.lockedDo(ctx, func(context.Context) error { return a.claimVerifyLocked(c) }); err != nil {
		return false, err
	}
	if err := a.makeClaimedTree(ctx, c); err != nil {
		return false, err
	}

	out := a.runVerifyCandidate(ctx, c, timeout)
	err := a.lockedDo(ctx, func(ctx context.Context) error {
		rec, err := a.recordVerifyLocked(ctx, c, out)
		if rec != nil {
			c.rec = rec
		}
		return err
	})
	a.removePassedTree(ctx, c, out)
	if err != nil && errs.As(err).Code != errs.EVerifyFailed {
		return false, err
	}

	c.passed = out.Passed
	return out.Passed, nil
}

// lockedDo runs fn under the repo lock.
func (a *Lander) lockedDo(ctx context.Context, fn func(context.Context) error) error {
	ctx, unlock, err := a.LockWork(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	return fn(ctx)
}

// landStack lands a verified prefix of a stack, each its own land, under
// the repo lock. n is how many it handled (landed, or the one that failed
// to land, which ends it); errHeadMoved when the integration HEAD or a
// sandbox branch is no longer what the stack was built from.
func (a *Lander) landStack(ctx context.Context, stack []*candidate) (out []Outcome, n int, err error) {
	if len(stack) == 0 {
		return nil, 0, nil
	}

	verified := stack[len(stack)-1].res.ResultHead
	err = a.lockedDo(ctx, func(ctx context.Context) error {
		for _, c := range stack {
			rec, err := a.Store.ReadInvocation(c.rec.InvocationID)
			if err != nil {
				return err
			}

			// It can still land as planned: landable, its sandbox branch
			// unchanged (the integration branch itself is judged by the
			// gate, commitLandLocked, by its ref, not by what HEAD points
			// at). One that can no longer land at all ends the stack.
			if err := landable(rec); err != nil {
				out, n = append(out, outcomeOf(c.rec.InvocationID, nil, err)), n+1
				return nil
			}

			tip, err := a.Repo.RevParse(ctx, "refs/heads/"+rec.SandboxBranch)
			if err != nil {
				out, n = append(out, outcomeOf(c.rec.InvocationID, nil, core.SandboxBranchMissingErr(rec))), n+1
				return nil
			}

			if tip != c.tip {
				return errHeadMoved
			}

			if rec, err = a.markVerifiedLocked(rec, c, verified); err != nil {
				return err
			}

			err = a.commitLandLocked(ctx, rec, c.wt, c.res)
			if errors.Is(err, errHeadMoved) {
				return err
			}

			out, n = append(out, outcomeOf(c.rec.InvocationID, c.res, err)), n+1

			if err != nil {
				return nil
			}
		}

		return nil
	})
	return out, n, err
}

// markVerifiedLocked records that c passed the check as part of the
// verified stack top (verified_as_part_of): its own candidate was not
// checked, so the record holds no key a later land could reuse, and a
// member that then fails to land is checked again alone.
func (a *Lander) markVerifiedLocked(rec *store.InvocationRecord, c *candidate, verified string) (*store.InvocationRecord, error) {
	c.res.Verify, c.res.VerifyLog = store.VerifyPassed, rec.VerifyLog
	if c.passed && rec.VerifyCommit == c.res.ResultHead && rec.VerifyStatus == store.VerifyPassed {
		return rec, nil // checked itself in this batch (the top, or a prefix the bisection checked)
	}
	return a.Store.UpdateInvocationLocked(rec.InvocationID, func(r *store.InvocationRecord) error {
		r.VerifyStatus, r.VerifyCommit, r.VerifyOnto, r.VerifyTree = store.VerifyPassed, c.res.ResultHead, c.res.TargetHead, c.treeID
		r.VerifiedAsPartOf, r.VerifyKey, r.VerifyReusedFrom = verified, "", ""
		r.VerifyCommand, r.VerifyError, r.VerifyPID, r.VerifyPIDStartTime = c.command, "", nil, nil
		r.VerifyExitCode, r.VerifyDurationMS, r.VerifyLog = nil, 0, ""
		return nil
	})
}
