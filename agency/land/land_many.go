package land

import (
	"context"
	"sort"
	"time"

	"github.com/git-agency/git-agency/errs"
	"github.com/git-agency/git-agency/store"
)

// What happened to each invocation of a land of several (Outcome).
const (
	OutcomeLanded       = "landed"
	OutcomeVerifyFailed = "verify failed"
	// The check was stopped, or could not run: nothing said of the work.
	OutcomeVerifyCancelled = "verify cancelled"
	OutcomeVerifyError     = "verify error"
	OutcomeConflict        = "conflict"
	OutcomeRefused         = "refused"
)

// Outcome is one invocation's line of `agent land X Y Z`.
type Outcome struct {
	InvocationID string  `json:"invocation_id"`
	Outcome      string  `json:"outcome"`
	Result       *Result `json:"result,omitempty"`
	// Code, Error and Hint say why it did not land.
	Code  string `json:"code,omitempty"`
	Error string `json:"error,omitempty"`
	Hint  string `json:"hint,omitempty"`
	err   *errs.Error
}

// Err is why it did not land (nil when it landed).
func (o Outcome) Err() *errs.Error { return o.err }

// OutcomeOf is outcomeOf for the command line: one land's line, the
// same shape as each of several.
func OutcomeOf(inv string, res *Result, err error) Outcome { return outcomeOf(inv, res, err) }

// outcomeOf classifies a land's result.
func outcomeOf(inv string, res *Result, err error) Outcome {
	o := Outcome{InvocationID: inv, Outcome: OutcomeLanded, Result: res}
	if err == nil {
		return o
	}

	o.err = errs.As(err)
	o.Code, o.Error, o.Hint = string(o.err.Code), o.err.Msg, o.err.Hint
	switch o.err.Code {
	case errs.EVerifyFailed:
		o.Outcome = OutcomeVerifyFailed
	case errs.EVerifyCancelled:
		o.Outcome = OutcomeVerifyCancelled
	case errs.EVerifyError:
		o.Outcome = OutcomeVerifyError
	case errs.ELandConflict:
		o.Outcome = OutcomeConflict
	default:
		o.Outcome = OutcomeRefused
	}

	return o
}

// LandMany is `agent land X Y Z …`: each invocation lands in the order
// given, each verified (when a check is set) on top of the ones landed
// before it. One that does not land (a red verify, a conflict, a refusal)
// is left pending with its sandbox, and the next one is tried. With
// opts.Batch > 1, candidates are verified in stacks (landBatched).
func (a *Lander) LandMany(ctx context.Context, ids []string, opts Options) []Outcome {
	if opts.Batch > 1 {
		return a.landBatched(ctx, ids, opts)
	}

	var out []Outcome
	for _, id := range ids {
		o := opts
		o.Query = id
		res, err := a.Land(ctx, o)
		inv := id
		if res != nil {
			inv = res.InvocationID
		} else if rec, rerr := a.Host.ResolveInvocation(id); rerr == nil {
			inv = rec.InvocationID
		}

		out = append(out, outcomeOf(inv, res, err))
	}

	return out
}

// ReadyToLand are the ids of the invocations `land --all` lands: every
// pending invocation that finished with something to land (of the
// worktree named, or of every worktree when it is ""), oldest finished
// first. One with nothing to land, its sandbox gone with no commits,
// commits off its branch, or (without apply) only uncommitted work is
// left out: land would only refuse it.
func (a *Lander) ReadyToLand(ctx context.Context, worktree string, apply bool) ([]string, error) {
	wtID := ""
	if worktree != "" {
		e, err := a.Host.ResolveWorktree(worktree, false)
		if err != nil {
			return nil, err
		}
		wtID = e.ID
	}

	list, err := a.Store.ScanInvocations()
	if err != nil {
		return nil, errs.IO("scan", a.Store.InvocationsDir(), err)
	}

	var ready []*store.InvocationRecord
	for _, e := range list {
		r := e.Record
		if e.Broken || r == nil || (wtID != "" && r.IntegrationWorktreeID != wtID) {
			continue
		}

		r = a.Host.Reconcile(ctx, r)
		if !r.Pending() || r.Status != store.StatusFinished {
			continue
		}

		// Something to land: a land of r (with apply or not) would take
		// work rather than refuse for want of it (LandHold).
		tip, err := a.Repo.RevParse(ctx, "refs/heads/"+r.SandboxBranch)
		if err != nil {
			continue
		}

		if hold := a.LandHold(ctx, r, tip); hold == "" || (apply && hold == DisplayNeedsApply) {
			ready = append(ready, r)
		}
	}

	a.sortByEnd(ready)
	ids := make([]string, 0, len(ready))
	for _, r := range ready {
		ids = append(ids, r.InvocationID)
	}

	return ids, nil
}

// sortByEnd orders invocations oldest finished first. finished_at has whole
// seconds: agents that finished within the same second are ordered by their
// end events (nanoseconds), read only then.
func (a *Lander) sortByEnd(recs []*store.InvocationRecord) {
	ended := map[string]time.Time{}
	endOf := func(r *store.InvocationRecord) time.Time {
		t, ok := ended[r.InvocationID]
		if !ok {
			t = a.endedAt(r)
			ended[r.InvocationID] = t
		}
		return t
	}
	sort.SliceStable(recs, func(i, j int) bool {
		fi, fj := parseRFC3339(store.Deref(recs[i].FinishedAt)), parseRFC3339(store.Deref(recs[j].FinishedAt))
		if !fi.Equal(fj) {
			return fi.Before(fj)
		}
		if ei, ej := endOf(recs[i]), endOf(recs[j]); !ei.Equal(ej) {
			return ei.Before(ej)
		}
		if si, sj := parseRFC3339(recs[i].StartedAt), parseRFC3339(recs[j].StartedAt); !si.Equal(sj) {
			return si.Before(sj)
		}
		return recs[i].InvocationID < recs[j].InvocationID
	})
}

// endedAt is when an invocation's runner ended, to the nanosecond: the time
// of its last end event (exited, start_failed, setup_failed). An
// invocation reconciled after its supervisor died has none: its finished_at.
func (a *Lander) endedAt(r *store.InvocationRecord) time.Time {
	evs, _ := a.Store.ReadEvents(r.InvocationID)
	for i := len(evs) - 1; i >= 0; i-- {
		switch evs[i].Event {
		case "exited", "start_failed", "setup_failed":
			if t, err := time.Parse(time.RFC3339Nano, evs[i].Time); err == nil {
				return t
			}
		}
	}
	return parseRFC3339(store.Deref(r.FinishedAt))
}

// parseRFC3339 is a record's timestamp as a time; the zero time when it is
// empty or unreadable (sorted first).
func parseRFC3339(s string) time.Time {
	t, _ := time.Parse(time.RFC3339Nano, s)
	return t
}
