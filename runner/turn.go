package runner

import (
	"os"
	"path/filepath"
	"time"

	"github.com/git-agency/git-agency/runner/stream"
	"github.com/git-agency/git-agency/store"
)

// An invocation is a conversation of one or more turns (agent start, then
// each agent send). What belongs to a turn, and what to the conversation:

// TurnUsage is a conversation's usage once a run reported u: prev is what
// the earlier turns recorded (nil for the first). The runners' own totals,
// claude's result and codex's turn.completed, are cumulative on a resumed
// conversation, so once the run reported them they replace prev's tokens
// and cost (never added: that would count the earlier turns twice); only
// the turn counts add up. Before that (a run still going, or one that died
// early) the run's own usage is added to prev.
func TurnUsage(prev *store.Usage, st stream.StreamState, u stream.Usage) *store.Usage {
	run := UsageRecord(u)
	if prev == nil {
		return run
	}
	out := *prev
	out.Turns += run.Turns
	if st.ResultSeen || u.Turns > 0 {
		out.InputTokens, out.OutputTokens, out.CostUSD = run.InputTokens, run.OutputTokens, run.CostUSD
		if run.CostUSD == nil {
			out.CostUSD = prev.CostUSD
		}
		return &out
	}
	out.InputTokens += run.InputTokens
	out.OutputTokens += run.OutputTokens
	if run.CostUSD != nil {
		c := *run.CostUSD
		if prev.CostUSD != nil {
			c += *prev.CostUSD
		}
		out.CostUSD = &c
	}
	return &out
}

// TurnRunnerStatus is the sandbox's runner_status.json when the current
// turn wrote it: one left from an earlier turn (older than the record's
// turn_started_at) says nothing about this one. nil when there is none or
// it cannot be read.
func TurnRunnerStatus(rec *store.InvocationRecord) *stream.RunnerStatus {
	rs, err := stream.ReadRunnerStatus(rec.SandboxPath)
	if err != nil || rs == nil {
		return nil
	}
	if rec.TurnStartedAt != "" {
		began, err := time.Parse(time.RFC3339, rec.TurnStartedAt)
		fi, serr := os.Stat(filepath.Join(rec.SandboxPath, stream.RunnerStatusPath))
		// RFC3339 has whole seconds: a file from the turn's first second counts.
		if err == nil && serr == nil && fi.ModTime().Before(began) {
			return nil
		}
	}
	return rs
}
