package remote

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
func (a *Remote) ActOnHost(ctx context.Context, rec *store.InvocationRecord, stdout, stderr io.Writer, args ...string) (int, error) {
	return a.OnHost(ctx, rec, HostRun{Stdout: stdout, Stderr: stderr}, append([]string{"agent"}, args...)...)
}

// HostRun is how a command forwarded to a host runs.
type HostRun struct {
	Stdout, Stderr io.Writer
	// Long: the command follows the agent (logs -f, a followed send) and
	// is not bounded by hostActWithin; the user ends it.
	Long bool
}

// OnHost runs `git-agency <args>` in the host's mirror of this repository
// for the invocation rec (any command: agent …, checkpoint …). After an
// act its outcome is fetched now (the invocation synced) and the host's
// fetcher runs; a read (hostRead) writes nothing here. It returns the
// remote command's exit status.
func (a *Remote) OnHost(ctx context.Context, rec *store.InvocationRecord, run HostRun, args ...string) (int, error) {
	code, err := a.runOnHost(ctx, rec.Host, run, args...)
	if err != nil {
		return 0, err
	}
	if hostRead(args) {
		return code, nil
	}

	sctx, scancel := context.WithTimeout(context.WithoutCancel(ctx), hostActWithin)
	defer scancel()
	a.syncHostWithin(sctx, rec.Host, []string{rec.InvocationID}, hostActWithin)
	a.EnsureHostFetcher(rec.Host)
	return code, nil
}

// hostRead: the forwarded command only reads (agent logs, checkpoint ls),
// so that, as every view, it writes nothing here.
func hostRead(args []string) bool {
	if len(args) < 2 {
		return false
	}

	switch args[0] + " " + args[1] {
	case "agent logs", "agent show", "checkpoint ls", "checkpoint show":
		return true
	}

	return false
}

// runOnHost runs `git-agency <args>` in the host's mirror of this
// repository; it returns the remote command's exit status.
func (a *Remote) runOnHost(ctx context.Context, name string, run HostRun, args ...string) (int, error) {
	h, mirror, err := a.hostMirror(ctx, name)
	if err != nil {
		return 0, err
	}

	rctx, cancel := ctx, context.CancelFunc(func() {})
	if !run.Long {
		rctx, cancel = context.WithTimeout(ctx, hostActWithin)
	}
	defer cancel()
	out, errw := run.Stdout, run.Stderr
	if out == nil {
		out = io.Discard
	}

	if errw == nil {
		errw = io.Discard
	}

	res, err := h.RunTo(rctx, host.RemoteProgram(append([]string{"--repo", mirror}, args...)...), nil, out, errw)
	if err != nil {
		return 0, a.unreachableErr(name, err)
	}

	return res.ExitCode, nil
}

// hostMirror is the ssh door to a host and the path of this repository's
// mirror there (the host is asked when it is not known yet).
func (a *Remote) hostMirror(ctx context.Context, name string) (*host.Host, string, error) {
	h, _, err := a.hostOf(name)
	if err != nil {
		return nil, "", err
	}

	st := a.hostStateOf(name)
	if st.Hello == nil || st.Hello.Mirror == "" {
		if _, err := a.helloWithin(ctx, name, hostActWithin); err != nil {
			return nil, "", a.unreachableErr(name, err)
		}
		st = a.hostStateOf(name)
	}

	if st.Hello == nil || st.Hello.Mirror == "" {
		return nil, "", errs.HostFailed(name, "host-serve hello", 0, "no mirror of this repository")
	}

	return h, st.Hello.Mirror, nil
}

// unreachableErr is E_HOST_UNREACHABLE for a host ssh could not reach,
// with the time it stopped answering.
func (a *Remote) unreachableErr(name string, err error) error {
	if !hostUnreachable(err) {
		return err
	}
	st := a.noteHost(name, nil, err)
	return errs.HostUnreachable(name, st.Since, err.Error())
}

// DiscardHostRecord marks a host invocation discarded here once its host
// discarded it (its fetched branch and checkpoints stay until gc).
func (a *Remote) DiscardHostRecord(ctx context.Context, id string) (*store.InvocationRecord, error) {
	ctx, unlock, err := a.LockWork(ctx)
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
		cur.FinishedAt = store.Str(a.Stamp())
	}

	if cur.Active() {
		cur.Status, cur.ExitReason = store.StatusFinished, store.Str(store.ExitStopped)
	}

	if err := a.Store.WriteInvocation(cur); err != nil {
		return nil, err
	}

	a.Event(id, "discarded", map[string]any{"host": cur.Host})
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
func (a *Remote) CatchUpHosts(ctx context.Context, queries []string) {
	byHost := map[string][]string{}
	for _, q := range queries {
		rec, err := a.Agency.ResolveInvocation(q)
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
func (a *Remote) recordHostLost(ctx context.Context, name string, ids []string) {
	c, _ := a.hostConfigOf(name)
	a.endHostRuns(ctx, ids, "host_lost", errs.HostLostNote(name, c.LostAfter.String()))
}

// endHostRuns ends the records of ids still running or queued: failed,
// for an unknown reason, with the error note (event names why).
func (a *Remote) endHostRuns(ctx context.Context, ids []string, event, note string) {
	_, unlock, err := a.LockWork(ctx)
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
		cur.FinishedAt = store.Str(a.Stamp())
		cur.Error = note
		if err := a.Store.WriteInvocation(cur); err != nil {
			a.Warning(id, err)
			continue
		}

		a.Event(id, event, map[string]any{"host": cur.Host})
	}
}
