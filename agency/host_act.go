package agency

import (
	"context"
	"io"
	"time"

	"github.com/git-agency/git-agency/errs"
	"github.com/git-agency/git-agency/host"
	"github.com/git-agency/git-agency/store"
)

// hostActWithin bounds an action forwarded to a host (a stop waits there).
const hostActWithin = 2 * time.Minute

// ActOnHost runs `git-agency agent <args>` in the host's mirror of this
// repository, where the invocation rec really runs (stop, kill, logs,
// discard: the host's supervisor owns the agent), its output streamed to
// stdout and stderr; then the invocation is synced (its record catches up,
// its refs are fetched). It returns the remote command's exit status.
func (a *App) ActOnHost(ctx context.Context, rec *store.InvocationRecord, stdout, stderr io.Writer, args ...string) (int, error) {
	h, _, err := a.Host(rec.Host)
	if err != nil {
		return 0, err
	}
	st := a.HostStateOf(rec.Host)
	if st.Hello == nil || st.Hello.Mirror == "" {
		if _, err := a.helloWithin(ctx, rec.Host, hostActWithin); err != nil {
			return 0, a.unreachableErr(rec.Host, err)
		}
		st = a.HostStateOf(rec.Host)
	}
	ctx, cancel := context.WithTimeout(ctx, hostActWithin)
	defer cancel()
	res, err := h.RunTo(ctx, host.RemoteProgram(append([]string{"--repo", st.Hello.Mirror, "agent"}, args...)...), nil, stdout, stderr)
	if err != nil {
		return 0, a.unreachableErr(rec.Host, err)
	}
	if len(args) > 0 && args[0] != "logs" {
		// An act: its outcome is fetched now, and the host's fetcher runs.
		a.syncHost(ctx, rec.Host, []string{rec.InvocationID})
		a.EnsureHostFetcher(rec.Host)
	}
	return res.ExitCode, nil
}

// unreachableErr is E_HOST_UNREACHABLE for a host ssh could not reach,
// with the time it stopped answering.
func (a *App) unreachableErr(name string, err error) error {
	if !IsUnreachable(err) {
		return err
	}
	st := a.noteHost(name, nil, err)
	return errs.HostUnreachable(name, st.Since, err.Error())
}

// DiscardHostRecord marks a host invocation discarded here once its host
// discarded it (its fetched branch and checkpoints stay until gc).
func (a *App) DiscardHostRecord(ctx context.Context, id string) (*store.InvocationRecord, error) {
	ctx, unlock, err := a.lockWork(ctx)
	if err != nil {
		return nil, err
	}
	defer unlock()
	cur, err := a.Store.ReadInvocation(id)
	if err != nil {
		return nil, err
	}
	cur.LandingStatus = store.Str(store.LandingDiscarded)
	if cur.FinishedAt == nil {
		cur.FinishedAt = store.Str(a.now())
	}
	if cur.Active() {
		cur.Status, cur.ExitReason = store.StatusFinished, store.Str(store.ExitStopped)
	}
	if err := a.Store.WriteInvocation(cur); err != nil {
		return nil, err
	}
	a.event(id, "discarded", map[string]any{"host": cur.Host})
	_ = ctx
	return cur, nil
}

// CatchUpHosts is what a command that acts on invocations (a land) does
// first for those of queries on hosts whose end or refs are not here yet:
// each host asked now (bounded by hostAnswerWithin), their refs fetched
// and records caught up. The run of a lost host (unreachable for its
// agency.host.<name>.lostAfter) is recorded as ended, failed, so that its
// last fetched work can land. A host that does not answer is left as it
// is; its fetcher is started.
func (a *App) CatchUpHosts(ctx context.Context, queries []string) {
	byHost := map[string][]string{}
	for _, q := range queries {
		rec, err := a.ResolveInvocation(q)
		if err != nil || rec.Host == "" || (!rec.Active() && !rec.Queued() && rec.FinishedAt != nil && a.fetchedFinal(rec)) {
			continue
		}
		byHost[rec.Host] = append(byHost[rec.Host], rec.InvocationID)
	}
	for name, ids := range byHost {
		if a.hostLost(name) {
			a.recordHostLost(ctx, name, ids)
			continue
		}
		a.syncHost(ctx, name, ids)
		if a.hostLost(name) {
			a.recordHostLost(ctx, name, ids)
			continue
		}
		a.EnsureHostFetcher(name)
	}
}

// recordHostLost ends the records of ids, whose host is lost: failed, for
// an unknown reason, the error saying so.
func (a *App) recordHostLost(ctx context.Context, name string, ids []string) {
	c, _ := a.HostConfigOf(name)
	_, unlock, err := a.lockWork(ctx)
	if err != nil {
		return
	}
	defer unlock()
	for _, id := range ids {
		cur, err := a.Store.ReadInvocation(id)
		if err != nil || (!cur.Active() && !cur.Queued()) {
			continue
		}
		cur.Status, cur.ExitReason = store.StatusFailed, store.Str(store.ExitUnknown)
		cur.FinishedAt = store.Str(a.now())
		cur.Error = errs.HostLostNote(name, c.LostAfter.String())
		if err := a.Store.WriteInvocation(cur); err != nil {
			a.warn(id, err)
			continue
		}
		a.event(id, "host_lost", map[string]any{"host": cur.Host})
	}
}
