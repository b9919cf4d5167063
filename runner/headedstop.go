package runner

import (
	"context"
	"time"

	"github.com/git-agency/git-agency/runner/stream"
	"github.com/git-agency/git-agency/runner/tmux"
)

// A headed agent asked to stop must end, but C-c alone ends only the turn
// of claude or codex: they go back to their prompt and wait. So a stop
// (agent stop, which records the request and sends the first C-c; a
// supervisor told to stop with SIGTERM; a timeout) ends it in steps:
//  1. C-c;
//  2. after headedAgainAfter, C-c twice more: claude and codex quit on a
//     double C-c at their prompt;
//  3. after headedQuitAfter, the runner's quit command typed at its prompt
//     (claude /exit, codex /quit, agency.runner.<name>.quit), then Enter.
//     Only where no question can take that Enter for a yes: claude and
//     codex must have reported that they wait at their prompt (C-c does
//     nothing at claude's permission prompt, where Enter approves);
//  4. after headedKillAfter, the session is killed.
//
// The supervisor records exit_reason stopped (or timeout) whichever step
// ended it.
const (
	headedAgainAfter = time.Second
	headedQuitAfter  = 2500 * time.Millisecond
	headedKillAfter  = stopGrace
)

// stopLookEvery is how often the record is read for a stop request.
const stopLookEvery = 250 * time.Millisecond

// paneStop carries out a stop of one headed run, one step per poll.
type paneStop struct {
	s      *Supervisor
	client *tmux.Client
	sess   tmux.Session
	began  time.Time // the run's start, for its timeouts
	hw     *headedWatch

	asked    time.Time // when the stop began (zero: not asked)
	again    bool
	quitSent bool
	killed   bool
	lastLook time.Time
}

// poll notices a stop request (the record's, a cancelled supervisor, a
// timeout) and takes the step that is due.
func (p *paneStop) poll(ctx context.Context) {
	bg := context.WithoutCancel(ctx)
	if p.asked.IsZero() {
		switch {
		case ctx.Err() != nil:
			p.s.logf("supervisor asked to stop: C-c to the pane")
			p.begin(bg, true)
		case p.timedOut():
			p.begin(bg, true)
		case p.requested():
			// agent stop sent the first C-c itself.
			p.s.logf("stop requested: ending the agent in steps")
			p.begin(bg, false)
		}

		return
	}

	since := time.Since(p.asked)
	switch {
	case !p.again && since >= headedAgainAfter:
		p.again = true
		p.s.logf("still running %s after C-c: C-c twice more", headedAgainAfter)
		p.client.SendKeys(bg, p.sess.PaneID, "C-c", "C-c")
	case !p.quitSent && since >= headedQuitAfter:
		p.quitSent = true
		if q := p.s.Spec.Quit; q != "" && !p.safeToType() {
			p.s.logf("still running %s after C-c, not at its prompt: %q not typed", headedQuitAfter, q)
		} else if q != "" {
			p.s.logf("still running %s after C-c: typing %q", headedQuitAfter, q)
			if err := p.client.PasteText(bg, p.sess.PaneID, q); err == nil {
				p.client.SendKeys(bg, p.sess.PaneID, "Enter")
			}
		}
	case !p.killed && since >= headedKillAfter:
		p.killed = true
		p.s.logf("still running %s after C-c: killing the session", headedKillAfter)
		p.client.KillSession(bg, p.sess.Name)
	}
}

// safeToType says whether the quit command may be typed: claude and codex
// only when they said they wait at their prompt; another runner's quit
// command was configured by its user.
func (p *paneStop) safeToType() bool {
	switch p.s.Spec.Format {
	case stream.FormatClaude, stream.FormatCodex:
		return p.hw != nil && p.hw.atPrompt()
	}
	return true
}

// begin starts the steps (with the first C-c when ctrlC).
func (p *paneStop) begin(ctx context.Context, ctrlC bool) {
	p.asked = time.Now()
	if ctrlC {
		p.client.SendCtrlC(ctx, p.sess.PaneID)
	}
}

// timedOut checks the run's timeouts and records the one that fired.
func (p *paneStop) timedOut() bool {
	s := p.s
	if s.timedOut.Load() {
		return true
	}

	last := s.Store.LastOutput(s.Invocation)
	if last.IsZero() {
		last = p.began
	}

	why := s.timeoutWhy(p.began, last)
	if why == "" {
		return false
	}

	s.timeoutFired(why)
	return true
}

// requested reads the record for a stop request (at most every
// stopLookEvery). A kill request needs nothing here: agent kill kills
// the session itself.
func (p *paneStop) requested() bool {
	if time.Since(p.lastLook) < stopLookEvery {
		return false
	}
	p.lastLook = time.Now()
	cur, err := p.s.Store.ReadInvocation(p.s.Invocation)
	return err == nil && cur.StopRequested != ""
}
