package land

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/git-agency/git-agency/agency/internal/core"
	"github.com/git-agency/git-agency/errs"
	"github.com/git-agency/git-agency/runner"
	"github.com/git-agency/git-agency/store"
)

// Notification events of landing (agency.notify.command's "event").
const (
	NotifyLanded       = "landed"
	NotifyVerifyFailed = "verify_failed"
)

// verifyTailLines is how much of a red verify's log a follow-up prompt
// quotes.
const verifyTailLines = 100

// notifyLand queues a landing notification; flushNotify runs the queued
// ones once the repo lock is released.
func (a *Lander) notifyLand(_ context.Context, rec *store.InvocationRecord, event, display, summary string) {
	n := runner.Notification{Event: event, InvocationID: rec.InvocationID, Worktree: rec.IntegrationWorktreeID,
		Runner: rec.Runner, DisplayStatus: display, Summary: summary, Time: a.Stamp()}
	if wt, err := a.Store.ReadWorktree(rec.IntegrationWorktreeID); err == nil && wt.Name != "" {
		n.Worktree = wt.Name
	}
	cp := *rec
	a.Notes.mu.Lock()
	a.Notes.list = append(a.Notes.list, pendingNote{n: n, rec: &cp})
	a.Notes.mu.Unlock()
}

// pendingNote is a notification waiting for the lock to be released.
type pendingNote struct {
	n   runner.Notification
	rec *store.InvocationRecord
}

// flushNotify runs agency.notify.command for each queued notification,
// each bounded by agency.notify.timeout; a failure is an event.
func (a *Lander) flushNotify(ctx context.Context) {
	a.Notes.mu.Lock()
	notes := a.Notes.list
	a.Notes.list = nil
	a.Notes.mu.Unlock()
	command, ok := a.Config.Get("agency.notify.command")
	if !ok || command == "" {
		return
	}
	timeout, err := runner.NotifyTimeoutFromConfig(a.Config)
	if err != nil {
		timeout = runner.NotifyTimeout
	}
	for _, p := range notes {
		if err := runner.RunNotify(context.WithoutCancel(ctx), command, p.n, p.rec, timeout); err != nil {
			a.Event(p.n.InvocationID, "notify_failed", map[string]any{"notify_event": p.n.Event, "error": err.Error()})
		}
	}
}

// sendBackIfAsked gives a red verify of inv to its agent as a follow-up
// prompt (agent send) when --send-back or agency.verify.sendBack asks,
// at most agency.verify.maxRounds times. The agent's next finish is
// verified again (AfterRun). round is the round sent (0: not sent).
func (a *Lander) sendBackIfAsked(ctx context.Context, inv string, opts Options) (round int) {
	if on, _ := a.Config.Bool(VerifySendBackKey, false); !on && !opts.SendBack {
		return 0
	}
	rec, err := a.Store.ReadInvocation(inv)
	if err != nil || rec.VerifyRounds >= a.verifyMaxRounds() {
		return 0
	}
	prompt := a.sendBackPrompt(rec)
	if _, err := a.Store.UpdateInvocation(a.LockTimeout, inv, func(r *store.InvocationRecord) error {
		r.VerifySendBack, r.VerifyApply = true, opts.Apply
		r.VerifyRounds++
		return nil
	}); err != nil {
		a.Warning(inv, err)
		return 0
	}
	if err := a.Host.SendBack(ctx, inv, prompt); err != nil {
		a.Warning(inv, err)
		if _, err := a.Store.UpdateInvocation(a.LockTimeout, inv, func(r *store.InvocationRecord) error {
			r.VerifySendBack = false
			return nil
		}); err != nil {
			a.Warning(inv, err)
		}
		return 0
	}
	a.Event(inv, "verify_sent_back", map[string]any{"round": rec.VerifyRounds + 1})
	return rec.VerifyRounds + 1
}

// sentBack is a red verify's error once its work went back to the agent
// (round > 0): it says so, and no longer hints to send it.
func sentBack(err error, inv string, round int) error {
	if round == 0 {
		return err
	}
	return errs.VerifyFailedSentBack(errs.As(err), inv, round)
}

// sendBackPrompt is the follow-up prompt of a red verify: the command, how
// it ended and the last lines of its log.
func (a *Lander) sendBackPrompt(rec *store.InvocationRecord) string {
	var b strings.Builder
	fmt.Fprintf(&b, "The check `%s` failed on your work merged onto the integration branch", rec.VerifyCommand)
	if rec.VerifyExitCode != nil {
		fmt.Fprintf(&b, " (exit status %d)", *rec.VerifyExitCode)
	}
	if rec.VerifyError != "" {
		fmt.Fprintf(&b, ": %s", rec.VerifyError)
	}
	fmt.Fprintf(&b, ".\nHere are the last %d lines of its output:\n\n```\n%s```\n\n", verifyTailLines, logTail(rec.VerifyLog, verifyTailLines))
	b.WriteString("Fix the cause in this tree and commit, so that the check passes.\n")
	return b.String()
}

// logTail is the last n lines of a file ("" when it cannot be read),
// ending in a newline.
func logTail(path string, n int) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	lines := bytes.SplitAfter(data, []byte("\n"))
	if len(lines) > 0 && len(lines[len(lines)-1]) == 0 {
		lines = lines[:len(lines)-1]
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	out := string(bytes.Join(lines, nil))
	if out != "" && !strings.HasSuffix(out, "\n") {
		out += "\n"
	}
	return out
}

// AfterRun is what an invocation's supervisor does once its agent has
// exited: with agency.autoLand, or when a red verify was sent back to the
// agent, it verifies and lands the invocation (when it finished with
// commits and its forecast says it lands cleanly). A red verify leaves it
// pending (sent back again when asked). The outcome is in the record and
// events; err is for the supervisor's log.
func (a *Lander) AfterRun(ctx context.Context, inv string) error {
	rec, err := a.Store.ReadInvocation(inv)
	if err != nil {
		return err
	}
	auto, _ := a.Config.Bool(AutoLandKey, false)
	if !(auto || rec.VerifySendBack) || !rec.Pending() || rec.Status != store.StatusFinished {
		return nil
	}
	commits, err := a.Repo.Commits(ctx, rec.BaseCommit, "refs/heads/"+rec.SandboxBranch)
	if err != nil || (len(commits) == 0 && !rec.VerifyApply) {
		return core.GitErr(err)
	}
	if clean, _, ok := a.Host.Forecast(ctx, rec.IntegrationWorktreeID, inv); !ok || !clean {
		a.Event(inv, "auto_land_skipped", map[string]any{"reason": "the forecast does not say it lands cleanly"})
		return nil
	}
	a.Event(inv, "auto_land", map[string]any{"send_back_round": rec.VerifyRounds})
	_, err = a.Land(ctx, Options{Query: inv, SendBack: rec.VerifySendBack, Apply: rec.VerifyApply})
	if err != nil && errs.As(err).Code != errs.EVerifyFailed {
		a.Event(inv, "auto_land_failed", map[string]any{"error": errs.As(err).Msg})
	}
	return err
}
