package remote

import (
	"context"

	"github.com/git-agency/git-agency/runner"
	"github.com/git-agency/git-agency/store"
)

// The user's notify command (agency.notify.command) runs here for the
// events of agents on hosts, when their fetched outcomes arrive: the host
// does not have the command (it does not travel), this machine does.

// displayNeedsInput is the display of an agent waiting for a person.
const displayNeedsInput = "needs input"

// hostNote is one notification of an agent on a host.
type hostNote struct {
	event, display string
	rec            *store.InvocationRecord
}

// endNote is the notification of a host agent's end (a turn's end: a
// follow-up turn ends the same way), as its supervisor there would give
// it: finished with its display, or failed.
func endNote(rec *store.InvocationRecord, display string) hostNote {
	if rec.Status == store.StatusFailed {
		return hostNote{runner.NotifyFailed, "failed", rec}
	}
	if display == "" {
		display = string(rec.Status)
	}
	return hostNote{runner.NotifyFinished, display, rec}
}

// notifyHost runs agency.notify.command for each note, with this side's
// record (its worktree, no sandbox here), each bounded by
// agency.notify.timeout; a failure is an event.
func (a *Remote) notifyHost(ctx context.Context, notes []hostNote) {
	command, ok := a.Config.Get("agency.notify.command")
	if !ok || command == "" || len(notes) == 0 {
		return
	}

	timeout, err := runner.NotifyTimeoutFromConfig(a.Config)
	if err != nil {
		timeout = runner.NotifyTimeout
	}

	for _, nt := range notes {
		rec, err := a.Store.ReadInvocation(nt.rec.InvocationID)
		if err != nil {
			continue
		}

		n := runner.Notification{Event: nt.event, InvocationID: rec.InvocationID, Worktree: rec.IntegrationWorktreeID,
			Runner: rec.Runner, DisplayStatus: nt.display, Summary: noteSummary(nt.rec), Time: a.Stamp()}
		if wt, err := a.Store.ReadWorktree(rec.IntegrationWorktreeID); err == nil && wt.Name != "" {
			n.Worktree = wt.Name
		}

		if err := runner.RunNotify(context.WithoutCancel(ctx), command, n, rec, timeout); err != nil {
			a.Event(rec.InvocationID, "notify_failed", map[string]any{"notify_event": n.Event, "error": err.Error(), "host": rec.Host})
		}
	}
}

// noteSummary is what a notification says of a run (as its supervisor's).
func noteSummary(r *store.InvocationRecord) string {
	switch {
	case r.SemanticSummary != "":
		return r.SemanticSummary
	case r.Error != "":
		return r.Error
	}
	return "exit_reason " + store.Deref(r.ExitReason)
}
