package agency

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/git-agency/git-agency/errs"
	"github.com/git-agency/git-agency/runner"
	"github.com/git-agency/git-agency/runner/tmux"
	"github.com/git-agency/git-agency/store"
	"github.com/git-agency/git-agency/wall"
)

// SendOptions are the inputs of `agent send`.
type SendOptions struct {
	Invocation   string
	Prompt       string
	PromptSource string // "flag", "file", "editor"
	PromptPath   string
}

// SendResult says how a follow-up prompt was given.
type SendResult struct {
	Record *store.InvocationRecord
	// Typed: the prompt was typed into a running headed agent's pane;
	// otherwise a new turn resumes the conversation under a new supervisor.
	Typed bool
	// LogSizes are the sizes of the logs when the new turn began, where
	// its output starts (FollowOptions.From).
	LogSizes map[string]int64
}

// Failpoints of Send.
const FPSendSpawn = "agent-send:spawn"

// sendPlan is what PrepareSend found out.
type sendPlan struct {
	rec   *store.InvocationRecord
	spec  runner.Spec
	typed bool
}

// PrepareSend checks, without changing anything, that an invocation takes a
// follow-up prompt: it is neither landed nor discarded; a headless agent has
// finished; a finished one has a sandbox, a session id and a runner that can
// resume it. A running headed agent takes it typed into its pane.
func (a *App) PrepareSend(ctx context.Context, query string) (*store.InvocationRecord, error) {
	p, err := a.planSend(ctx, query)
	if err != nil {
		return nil, err
	}
	return p.rec, nil
}

func (a *App) planSend(ctx context.Context, query string) (*sendPlan, error) {
	rec, err := a.ResolveInvocation(query)
	if err != nil {
		return nil, err
	}
	rec = a.Reconcile(ctx, rec)
	return a.checkSend(rec)
}

// checkSend is PrepareSend's rules for one record.
func (a *App) checkSend(rec *store.InvocationRecord) (*sendPlan, error) {
	inv := rec.InvocationID
	switch store.Deref(rec.LandingStatus) {
	case store.LandingLanded:
		return nil, errs.SendClosed(inv, errs.EAlreadyLanded, "landed")
	case store.LandingDiscarded:
		return nil, errs.SendClosed(inv, errs.EDiscarded, "discarded")
	}

	if rec.Status == store.StatusQueued {
		return nil, errs.SendQueued(inv)
	}

	if rec.Active() {
		if rec.Mode != store.ModeHeaded {
			return nil, errs.SendBusy(inv)
		}
		if rec.Status != store.StatusRunning || paneOf(rec) == "" {
			return nil, errs.SendStarting(inv)
		}
		if _, err := tmux.Available(); err != nil {
			return nil, tmuxNotFound()
		}

		return &sendPlan{rec: rec, typed: true}, nil
	}

	if fi, err := os.Stat(rec.SandboxPath); err != nil || !fi.IsDir() {
		return nil, sandboxGone(rec, rec.SandboxPath)
	}

	spec, err := runner.Lookup(a.Config, rec.Runner)
	if err != nil {
		return nil, err
	}
	if len(spec.ResumeArgs) == 0 {
		return nil, errs.NoResume(inv, rec.Runner)
	}

	// An id chosen up front names a conversation only once the runner ran
	// (not after a failed setup or start).
	// Without an id, a runner that can resume the latest conversation in
	// the sandbox (codex resume --last) continues that one.
	if !a.runnerStarted(inv) || rec.SessionID == "" && len(spec.ResumeLastArgs) == 0 {
		return nil, errs.NoSessionID(inv, rec.Runner)
	}
	if _, err := spec.Find(); err != nil {
		return nil, err
	}

	if rec.Mode == store.ModeHeaded {
		if _, err := tmux.Available(); err != nil {
			return nil, tmuxNotFound()
		}
	}

	// A follow-up works alone inside the wall as the first turn did.
	spec = spec.Walled(rec.Isolation == wall.IsolateBwrap, rec.Mode == store.ModeHeadless, rec.RunnerArgs)
	return &sendPlan{rec: rec, spec: spec}, nil
}

// Send gives an invocation a follow-up prompt in its own sandbox and its
// own conversation. A finished invocation returns to running: the record
// gets a new turn, a resume command line and a new supervisor, whose logs,
// stream, events and checkpoints carry on from the earlier turns. A running
// headed one gets the prompt typed into its pane. A refusal changes
// nothing.
func (a *App) Send(ctx context.Context, opts SendOptions) (*SendResult, error) {
	if _, err := a.planSend(ctx, opts.Invocation); err != nil {
		return nil, err
	}
	if strings.TrimSpace(opts.Prompt) == "" {
		return nil, errs.SendPromptEmpty()
	}

	// The pane is typed into, or the supervisor spawned, under the lock:
	// lockWork bounds both.
	ctx, unlock, err := a.lockWork(ctx)
	if err != nil {
		return nil, err
	}
	defer unlock()

	// Again under the lock: another send or a land may have come first.
	cur, err := a.ResolveInvocation(opts.Invocation)
	if err != nil {
		return nil, err
	}

	p, err := a.checkSend(a.reconcileLocked(ctx, cur))
	if err != nil {
		return nil, err
	}

	rec := p.rec

	// The prompt must reach the runner byte for byte, as for start: typed
	// into a pane (a tmux command), or as the resumed command's argument.
	check := StartOptions{Prompt: opts.Prompt, Headless: rec.Mode == store.ModeHeadless}
	if !p.typed {
		check.RunnerArgs = p.spec.ResumeRunnerArgs(rec.RunnerArgs, rec.SessionID)
	}

	if err := checkPrompt(p.spec, check, a.runnerPaths(rec.SandboxPath)); err != nil {
		return nil, err
	}

	turn := max(rec.Turns, 1) + 1
	promptFile := filepath.Join(a.Store.InvocationDir(rec.InvocationID), fmt.Sprintf("prompt-%d.md", turn))
	if err := store.WriteFileAtomic(promptFile, []byte(opts.Prompt), 0o600); err != nil {
		return nil, err
	}
	if p.typed {
		return a.typePrompt(ctx, rec, turn, opts, promptFile)
	}

	if err := a.roomToResume(ctx); err != nil {
		os.Remove(promptFile)
		return nil, err
	}

	next := *rec
	next.Command = p.spec.Argv(check.Headless, check.RunnerArgs, opts.Prompt, a.runnerPaths(rec.SandboxPath))

	// A headed claude gets its hooks again, as agent start gave them.
	if next.Command, err = a.withHooks(p.spec, check.Headless, rec.InvocationID, next.Command); err != nil {
		os.Remove(promptFile)
		return nil, err
	}

	setTurns(&next, turn)
	next.Status = store.StatusStarting
	next.TurnStartedAt = a.now()
	next.PID, next.PIDStartTime = nil, nil
	next.SupervisorPID, next.SupervisorStartTime = nil, nil
	next.TmuxPane = ""
	next.FinishedAt, next.ExitCode, next.ExitReason = nil, nil, nil
	next.Error, next.StopRequested = "", ""
	next.SemanticStatus, next.SemanticSummary = "", ""

	if err := a.fail(FPSendSpawn); err != nil {
		os.Remove(promptFile)
		return nil, err
	}

	sizes := a.logSizes(rec.InvocationID)

	// spawnSupervisor writes the record only once the supervisor runs: a
	// failure before that leaves the finished record as it was.
	if err := a.spawnSupervisor(ctx, &next, false); err != nil {
		os.Remove(promptFile)
		return nil, err
	}

	a.event(rec.InvocationID, "sent", map[string]any{
		"turn": turn, "session_id": rec.SessionID, "prompt_source": opts.PromptSource,
	})
	return &SendResult{Record: &next, LogSizes: sizes}, nil
}

// logSizes are the current sizes of an invocation's logs, by name.
func (a *App) logSizes(inv string) map[string]int64 {
	sizes := map[string]int64{}
	for _, name := range []string{RawLog, StreamLog, StderrLog, SetupLog, runner.PaneLog} {
		if fi, err := os.Stat(filepath.Join(a.Store.SandboxLogsDir(inv), name)); err == nil {
			sizes[name] = fi.Size()
		}
	}
	return sizes
}

// typePrompt types the prompt into a running headed agent's own pane,
// literally, then Enter, and counts the turn.
func (a *App) typePrompt(ctx context.Context, rec *store.InvocationRecord, turn int, opts SendOptions, promptFile string) (*SendResult, error) {
	client := tmuxClient()
	pane := paneOf(rec)

	// Pasted, not typed: codex takes fast typing for a paste and the Enter
	// right after it for a new line, so the prompt was never submitted. A
	// newline inside the prompt stays a new line of the pasted text; the
	// final one (a prompt file's) would only add an empty line before Enter.
	if err := client.PasteText(ctx, pane, strings.TrimRight(opts.Prompt, "\r\n")); err != nil {
		os.Remove(promptFile)
		return nil, errs.Wrap(errs.EIO, err, "see 'git agency agent show "+rec.InvocationID+"'", "cannot type into the agent's pane")
	}

	if err := client.SendKeys(ctx, pane, "Enter"); err != nil {
		return nil, errs.Wrap(errs.EIO, err, "see 'git agency agent show "+rec.InvocationID+"'", "cannot type into the agent's pane")
	}

	// A slash command (/exit, /compact) talks to the CLI, not the model:
	// it is no turn of the conversation.
	data := map[string]any{"typed": true, "pane": pane, "prompt_source": opts.PromptSource}
	if strings.HasPrefix(strings.TrimSpace(opts.Prompt), "/") {
		data["command"] = strings.TrimSpace(opts.Prompt)
		os.Remove(promptFile)
	} else {
		setTurns(rec, turn)
		data["turn"] = turn
		if err := a.Store.WriteInvocation(rec); err != nil {
			return nil, err
		}
	}

	a.event(rec.InvocationID, "sent", data)
	return &SendResult{Record: rec, Typed: true}, nil
}

// runnerStarted tells whether the invocation's runner was ever started (a
// "started" event).
func (a *App) runnerStarted(inv string) bool {
	events, _ := a.Store.ReadEvents(inv)
	for _, e := range events {
		if e.Event == "started" {
			return true
		}
	}
	return false
}

// roomToResume refuses a follow-up turn while agency.maxActive agents run:
// it is never queued. The caller holds the lock.
func (a *App) roomToResume(ctx context.Context) error {
	maxActive, err := a.MaxActive()
	if err != nil {
		return err
	}

	full, n, err := a.full(ctx, maxActive)
	if err != nil {
		return err
	}
	if full {
		return errs.TooManyActive(n, maxActive)
	}

	return nil
}

// setTurns counts a new turn in the record, and in its usage, which
// counts the conversation's turns too (agent show gives both).
func setTurns(rec *store.InvocationRecord, turns int) {
	rec.Turns = turns
	if rec.Usage != nil {
		u := *rec.Usage
		u.Turns = turns
		rec.Usage = &u
	}
}
