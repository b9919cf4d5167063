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
	a.syncHost(ctx, rec.Host, []string{rec.InvocationID})
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
