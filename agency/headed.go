package agency

import (
	"context"
	"errors"
	"path/filepath"
	"time"

	"github.com/git-agency/git-agency/errs"
	"github.com/git-agency/git-agency/internal/subproc"
	"github.com/git-agency/git-agency/runner"
	"github.com/git-agency/git-agency/runner/tmux"
	"github.com/git-agency/git-agency/store"
)

// tmuxClient is the client headed commands use (the user's default server).
func tmuxClient() *tmux.Client { return &tmux.Client{} }

func sessionOf(r *store.InvocationRecord) string {
	if r.TmuxSession != nil && *r.TmuxSession != "" {
		return *r.TmuxSession
	}
	return runner.SessionName(r.InvocationID)
}

// paneOf is the agent's own pane (the active pane of its session for
// records older than tmux_pane).
func paneOf(r *store.InvocationRecord) string {
	if r.TmuxPane != "" {
		return r.TmuxPane
	}
	return tmux.PaneTarget(sessionOf(r))
}

// headedState is reconcile's view of a headed invocation whose supervisor is
// gone: a live pane is running; a dead pane gives its status (with clean,
// the screen is captured and the session removed; a read leaves them); a
// vanished session is finished. When it cannot tell, the invocation is
// still running.
//
// It runs under the repo lock, so tmux is asked within reconcileTmuxWait
// (a tmux that does not answer in time counts as "cannot tell"), and the
// cleanup of a dead pane within tmuxWait per call.
func (a *App) headedState(ctx context.Context, r *store.InvocationRecord, clean bool) (running bool, exitCode *int) {
	client := tmuxClient()
	name := sessionOf(r)
	qctx, cancel := context.WithTimeout(ctx, reconcileTmuxWait)
	defer cancel()

	// Pane ids are unique per server only: after a server restart "%7"
	// may be someone else's, so the session must exist first.
	if ok, err := client.HasSession(qctx, name); err == nil && !ok {
		return false, nil
	}

	st, err := client.PaneState(qctx, paneOf(r))
	if err != nil {
		if errors.Is(err, tmux.ErrNotFound) || errors.Is(err, tmux.ErrNoServer) {
			return false, nil
		}
		if _, lerr := tmux.Available(); lerr != nil {
			return false, nil // tmux uninstalled: the session is gone for us
		}
		return true, nil // unsure: keep it running, look again next time
	}

	if !st.Dead {
		return true, nil
	}

	if !clean {
		code, _ := runner.DeadStatus(st)
		return false, code
	}

	cctx, cancel := context.WithTimeout(ctx, tmuxWait)
	defer cancel()
	runner.CaptureScreen(cctx, client, st.PaneID, filepath.Join(a.Store.SandboxLogsDir(r.InvocationID), runner.ScreenLog))
	kctx, cancel := context.WithTimeout(ctx, tmuxWait)
	defer cancel()
	_ = client.KillSession(kctx, name) // a session left behind is gc's to find
	code, _ := runner.DeadStatus(st)
	return false, code
}

// reconcileTmuxWait bounds what reconcile, a read path holding the repo
// lock, waits for tmux to say whether a headed agent still runs.
const reconcileTmuxWait = 2 * time.Second

// stopHeaded sends C-c to the pane (stop) or kills the session (kill).
func (a *App) stopHeaded(ctx context.Context, r *store.InvocationRecord, kill bool) error {
	client := tmuxClient()
	ctx, cancel := context.WithTimeout(ctx, tmuxWait)
	defer cancel()
	name := sessionOf(r)
	var err error
	if kill {
		err = client.KillSession(ctx, name)
	} else {
		err = client.SendCtrlC(ctx, paneOf(r))
	}

	if err != nil && !errors.Is(err, tmux.ErrNotFound) && !errors.Is(err, tmux.ErrNoServer) {
		return errs.Wrap(errs.EIO, err, "", "tmux")
	}

	return nil
}

// AttachCmd returns the command that attaches this terminal to a running
// headed invocation (switch-client when already inside the same tmux).
func (a *App) AttachCmd(ctx context.Context, query string) (*store.InvocationRecord, *subproc.Terminal, error) {
	rec, err := a.ResolveInvocation(query)
	if err != nil {
		return nil, nil, err
	}

	rec = a.View(ctx, rec)
	if rec.Mode != store.ModeHeaded {
		return nil, nil, errs.New(errs.ENotHeaded, "see its output with 'git agency agent logs "+rec.InvocationID+" --follow'",
			"invocation %s is headless: there is no terminal to attach to", rec.InvocationID)
	}

	if rec.Status == store.StatusStarting {
		// Its supervisor is still creating the session (or running a
		// setup script): wait for it, as `start -d` then `attach` expects.
		if r := a.waitRunningFor(ctx, rec.InvocationID, AttachWait); r != nil {
			rec = a.View(ctx, r)
		}

		if rec.Status == store.StatusStarting {
			return nil, nil, errs.NoSessionAfter(rec.InvocationID, AttachWait.String())
		}
	}

	if !rec.Active() {
		return nil, nil, errs.New(errs.ENotRunning, "its last screen is in 'git agency agent logs "+rec.InvocationID+"'",
			"invocation %s has ended (status %s)", rec.InvocationID, rec.Status)
	}
	if _, err := tmux.Available(); err != nil {
		return nil, nil, tmuxNotFound()
	}

	cmd, err := tmuxClient().AttachOrSwitchCmd(ctx, sessionOf(rec))
	if err != nil {
		return nil, nil, errs.Wrap(errs.EIO, err, "", "tmux")
	}

	return rec, cmd, nil
}

// Switched is the tmux client that attaching to a headed invocation moves
// when this process runs inside tmux already (switch-client), and the id
// of the session it is on before; Client is "" when attaching opens a
// client of its own.
type Switched struct{ Client, From string }

// SwitchedClient is the client (and its session) that attaching to rec
// from here would switch. Attach then returns at once; WaitSwitchedAway
// follows the switched client instead.
func (a *App) SwitchedClient(ctx context.Context, rec *store.InvocationRecord) Switched {
	client := tmuxClient()
	if !client.Inside(ctx, sessionOf(rec)) {
		return Switched{}
	}

	name, from, err := client.CurrentClient(ctx)
	if err != nil {
		return Switched{}
	}

	return Switched{Client: name, From: from}
}

// ReturnClient puts a switched client back on the session it came from
// (tmux moved it to the most recently active one when the agent's session
// ended, which may be another agent's). Best effort: that session may be
// gone, the client detached.
func (a *App) ReturnClient(ctx context.Context, sw Switched) {
	if sw.Client == "" || sw.From == "" {
		return
	}
	qctx, cancel := context.WithTimeout(ctx, tmuxWait)
	defer cancel()
	_ = tmuxClient().SwitchClientTo(qctx, sw.Client, sw.From)
}

// switchedPoll is how often WaitSwitchedAway looks at the client, and
// switchedTries how many tmux failures in a row end its wait.
const (
	switchedPoll  = 200 * time.Millisecond
	switchedTries = 10
)

// WaitSwitchedAway waits while the tmux client named client shows the
// invocation's session: until the user switches elsewhere or detaches, or
// the agent ends and its session goes (the client then returns to the
// session it came from). As an attached client returning, after which
// AfterAttach tells which it was.
func (a *App) WaitSwitchedAway(ctx context.Context, rec *store.InvocationRecord, client string) {
	waitClientAway(ctx, tmuxClient(), client, sessionOf(rec), switchedPoll)
}

// waitClientAway waits while client shows session (asking tc every poll).
func waitClientAway(ctx context.Context, tc *tmux.Client, client, session string, poll time.Duration) {
	t := time.NewTicker(poll)
	defer t.Stop()
	for failed := 0; ; {
		qctx, cancel := context.WithTimeout(ctx, tmuxWait)
		on, err := tc.ClientOn(qctx, client, session)
		cancel()

		switch {
		case err == nil && !on:
			return
		case err == nil:
			failed = 0
		case errors.Is(err, tmux.ErrNoServer) || failed >= switchedTries:
			return // tmux cannot tell (its server gone): as a client that returned
		default:
			failed++ // a slow tmux on a loaded machine: ask again
		}

		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// SessionAttachCmd is `tmux attach-session` to a headed invocation's
// session on git-agency's tmux server, or, inside a client of that server
// already, `tmux switch-client` of that client (which the tmux prefix then
// d brings back), as `agent attach` does; inside another tmux server it
// nests a client there.
func (a *App) SessionAttachCmd(ctx context.Context, rec *store.InvocationRecord) (*subproc.Terminal, error) {
	if _, err := tmux.Available(); err != nil {
		return nil, errs.TmuxMissing()
	}

	cmd, err := tmuxClient().AttachOrSwitchCmd(ctx, sessionOf(rec))
	if err != nil {
		return nil, errs.Wrap(errs.EIO, err, "", "tmux")
	}

	return cmd, nil
}

// tmuxNotFound is the error for a headed run without tmux.
func tmuxNotFound() error {
	return errs.New(errs.ETmuxNotFound, "install tmux, or run the agent with --headless",
		"headed agents run in tmux, which is not installed (not on PATH)")
}

// attachEndWait bounds how long AfterAttach waits for the supervisor to
// record a headed agent that ended (its pane dead or its session gone).
const attachEndWait = 30 * time.Second

// AfterAttach is a headed invocation's record once the attached client has
// returned: the final one when the agent ended (waiting for its supervisor
// to record it), nil when the agent still runs (the client detached).
func (a *App) AfterAttach(ctx context.Context, inv string) *store.InvocationRecord {
	for deadline := time.Now().Add(attachEndWait); time.Now().Before(deadline); {
		r, err := a.Store.ReadInvocation(inv)
		if err != nil {
			return nil
		}
		if r = a.View(ctx, r); !r.Active() {
			return r
		}
		if a.paneLive(ctx, r) || ctx.Err() != nil {
			return nil
		}

		sleep50ms()
	}

	return nil
}

// paneLive tells whether a headed invocation's session is there with its
// agent's pane alive (not when tmux cannot tell, say on a loaded machine).
func (a *App) paneLive(ctx context.Context, r *store.InvocationRecord) bool {
	client := tmuxClient()
	qctx, cancel := context.WithTimeout(ctx, tmuxWait)
	defer cancel()

	if ok, err := client.HasSession(qctx, sessionOf(r)); err != nil || !ok {
		return false
	}

	st, err := client.PaneState(qctx, paneOf(r))
	return err == nil && !st.Dead
}

// AttachWait bounds how long attach waits for a starting invocation's
// session (a setup script may run first).
const AttachWait = time.Minute

// WaitRunning waits (up to 10s) until a starting invocation runs or ends.
func (a *App) WaitRunning(ctx context.Context, inv string) *store.InvocationRecord {
	return a.waitRunningFor(ctx, inv, 10*time.Second)
}

// waitRunningFor waits up to d until a starting invocation runs or ends,
// and returns its record (nil if it could not be read).
func (a *App) waitRunningFor(ctx context.Context, inv string, d time.Duration) *store.InvocationRecord {
	var rec *store.InvocationRecord
	for deadline := time.Now().Add(d); time.Now().Before(deadline); {
		r, err := a.Store.ReadInvocation(inv)
		if err == nil {
			rec = a.View(ctx, r) // a dead supervisor ends the wait
			if rec.Status != store.StatusStarting {
				return rec
			}
		}

		if ctx.Err() != nil {
			return rec
		}

		sleep50ms()
	}

	return rec
}
