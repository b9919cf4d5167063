package cli

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/git-agency/git-agency/agency"
	"github.com/git-agency/git-agency/errs"
	"github.com/git-agency/git-agency/store"
)

// AgentLsCmd is `agent ls`.
type AgentLsCmd struct {
	JSONFlag
	Worktree string `short:"w" help:"Only this integration worktree's invocations."`
	All      bool   `help:"Also invocations landed or discarded more than a day ago (left out otherwise)."`
	AllReposFlag
}

type invocationJSON struct {
	repoJSON
	*store.InvocationRecord
	DisplayStatus    string `json:"display_status"`
	VerifyStatus     string `json:"verify_status"` // none, running, passed, failed
	WorktreeName     string `json:"worktree_name,omitempty"`
	CheckpointsError string `json:"checkpoints_error,omitempty"`
	// DiskBytes: the sandbox tree's disk use (cached; 0 once removed).
	DiskBytes int64 `json:"disk_bytes"`
	// QueuePlace: a queued invocation's place in the queue (1: next).
	QueuePlace int `json:"queue_place,omitempty"`
	// The conflict forecast (lands_cleanly, conflicts_with,
	// conflict_files), for pending invocations only.
	*agency.Forecast
}

// newInvocationJSON is an invocation as ls --json and show --json print it.
// a is nil for a repository that is gone (--all-repos).
func newInvocationJSON(a *agency.App, v *agency.InvocationView, worktreeName string) invocationJSON {
	j := invocationJSON{InvocationRecord: v.Record, DisplayStatus: v.Display, WorktreeName: worktreeName,
		CheckpointsError: v.CheckpointsError, QueuePlace: v.QueuePlace, Forecast: v.Forecast,
		VerifyStatus: agency.VerifyStatusOf(v.Record)}
	if a != nil {
		j.DiskBytes = v.DiskBytes(a)
	}
	return j
}

type brokenInvocationJSON struct {
	repoJSON
	InvocationID string `json:"invocation_id"`
	Broken       bool   `json:"broken"`
	Status       string `json:"status"`
	RecordDir    string `json:"record_dir"`
	Error        string `json:"error"`
}

func (c *AgentLsCmd) Run(env *Env) error {
	if c.AllRepos && c.Worktree != "" {
		return errs.AllReposWithWorktree()
	}

	groups, err := repoGroups(env, c.AllRepos)
	if err != nil {
		return err
	}

	out := []any{}
	for i, g := range groups {
		var views []agency.InvocationView
		if c.Worktree != "" {
			e, err := g.App.ResolveWorktree(c.Worktree, true)
			if err != nil {
				return err
			}

			views, err = g.App.ListInvocations(env.Ctx, agency.ListOptions{WorktreeID: e.ID, IntegrationDirty: true})
			if err != nil {
				return err
			}
		} else if views, err = g.ListInvocations(env.Ctx, agency.ListOptions{IntegrationDirty: true}); err != nil {
			return err
		}

		if !c.All {
			views = recent(views, time.Now())
		}

		names := worktreeNames(g.Store)
		if c.JSON {
			for _, v := range views {
				if v.Broken {
					out = append(out, brokenInvocationJSON{repoJSON: g.json, InvocationID: v.ID, Broken: true, Status: "broken", RecordDir: v.Dir, Error: errText(v.Err)})
					continue
				}
				j := newInvocationJSON(g.App, &v, names[v.Record.IntegrationWorktreeID])
				j.repoJSON = g.json
				out = append(out, j)
			}

			continue
		}

		g.header(env, i)
		t := newTable(env, "ID", "WORKTREE", "RUNNER", "MODE", "STATUS", "STATE", "LANDS", "STARTED", "SUMMARY")
		t.lead = g.lead()
		for _, v := range views {
			if v.Broken {
				t.add(v.ID, "-", "-", "-", "broken", "broken", "-", "-", "-")
				continue
			}

			r := v.Record
			summary := lsSummary(r)
			if v.CheckpointsError != "" {
				summary = "checkpoints failing (see 'git agency doctor')"
			}
			if t := recordTrouble(r); t != "" {
				summary = t
			}

			t.add(r.InvocationID, orDash(names[r.IntegrationWorktreeID]), r.Runner, modeText(r), r.Status, displayText(&v), forecastText(v.Forecast)+verifyMark(r), env.when(r.StartedAt), summary)
		}

		t.flush()
	}

	if c.JSON {
		return printJSON(env.Stdout, out)
	}

	return nil
}

// recent leaves out the invocations landed or discarded more than a day
// ago (agency.SettledLongAgo).
func recent(views []agency.InvocationView, now time.Time) []agency.InvocationView {
	out := views[:0:0]
	for _, v := range views {
		if v.Record == nil || !agency.SettledLongAgo(v.Record, now) {
			out = append(out, v)
		}
	}
	return out
}

// dirtyIntegration marks the forecast of the pending invocations whose
// integration tree has uncommitted changes: land refuses into it, so LANDS
// must not say clean. One look per worktree, only where a forecast is shown.
func dirtyIntegration(env *Env, a *agency.App, views []agency.InvocationView) {
	if a == nil {
		return
	}

	dirty := map[string]bool{}
	for i := range views {
		v := &views[i]
		if v.Forecast == nil || v.Record == nil {
			continue
		}

		wt := v.Record.IntegrationWorktreeID
		d, seen := dirty[wt]
		if !seen {
			d = a.IntegrationDirty(env.Ctx, wt)
			dirty[wt] = d
		}

		if d && v.Forecast.Refused == "" {
			v.Forecast = agency.DirtyRefused(v.Forecast)
		}
	}
}

// displayText is the STATE column: the display status, with a queued
// invocation's place ("queued #2").
func displayText(v *agency.InvocationView) string {
	if v.QueuePlace > 0 {
		return fmt.Sprintf("%s #%d", v.Display, v.QueuePlace)
	}
	return v.Display
}

// forecastText is agent ls's LANDS column: "clean", or "conflicts:"
// and what with (integration, or the short ids of the invocations it
// conflicts with when landed after them); "-" when not pending.
func forecastText(f *agency.Forecast) string {
	if f == nil {
		return "-"
	}
	if f.Refused != "" {
		return "refused:" + f.Refused
	}
	if len(f.ConflictsWith) == 0 {
		return "clean"
	}

	var with []string
	for _, p := range f.ConflictsWith {
		if p != agency.ConflictsIntegration {
			p = store.ShortID(p)
		}
		with = append(with, p)
	}

	return "conflicts:" + strings.Join(with, ",")
}

// lsSummary is the semantic status and summary of an invocation, short.
// recordTrouble is agent ls's summary for a run whose logs or record miss
// something: "logs incomplete", and why the record is not written yet (a
// full disk); "" for none.
func recordTrouble(r *store.InvocationRecord) string {
	var parts []string
	if r.LogsIncomplete != "" {
		parts = append(parts, "logs incomplete")
	}
	if r.RecordPending != "" {
		parts = append(parts, r.RecordPending)
	}
	return strings.Join(parts, "; ")
}

func lsSummary(r *store.InvocationRecord) string {
	s := strings.TrimSpace(r.SemanticStatus + ": " + r.SemanticSummary)
	s = strings.TrimPrefix(strings.TrimSuffix(s, ":"), ": ")
	if rs := []rune(s); len(rs) > 60 {
		s = string(rs[:59]) + "…"
	}
	return orDash(s)
}

func worktreeNames(st *store.Store) map[string]string {
	names := map[string]string{}
	if list, err := st.ScanWorktrees(); err == nil {
		for _, e := range list {
			if e.Record != nil {
				names[e.ID] = e.Record.Name
			}
		}
	}
	return names
}

// AgentShowCmd is `agent show`.
type AgentShowCmd struct {
	JSONFlag
	InvocationArg
}

func (c *AgentShowCmd) Run(env *Env) error {
	a, err := env.App()
	if err != nil {
		return err
	}

	v, err := a.ShowInvocation(env.Ctx, c.Invocation)
	if err != nil {
		return err
	}

	name := worktreeNames(a.Store)[v.Record.IntegrationWorktreeID]
	views := []agency.InvocationView{*v}
	dirtyIntegration(env, a, views)
	v = &views[0]
	if c.JSON {
		return printJSON(env.Stdout, newInvocationJSON(a, v, name))
	}

	printInvocation(env.Stdout, v, name, a)
	return nil
}

func printInvocation(w io.Writer, v *agency.InvocationView, wtName string, a *agency.App) {
	r := v.Record
	p := func(k, val string) { fmt.Fprintf(w, "%-24s %s\n", k+":", agency.TermEscape(val)) }
	pi := func(k string, n *int) {
		if n == nil {
			p(k, "-")
		} else {
			p(k, fmt.Sprint(*n))
		}
	}
	p("invocation_id", r.InvocationID)
	p("state", displayText(v))
	p("status", r.Status)
	p("integration_worktree_id", r.IntegrationWorktreeID+"  ("+orDash(wtName)+")")
	p("runner", r.Runner)
	p("mode", r.Mode)
	if r.Host != "" {
		p("host", r.Host)
	}

	p("isolation", isolationText(r.Isolation))
	p("command", fmt.Sprintf("%q", r.Command))

	if r.SessionID != "" {
		p("session_id", r.SessionID)
	}
	if r.Turns > 0 {
		p("turns", fmt.Sprint(r.Turns))
	}

	p("sandbox_path", r.SandboxPath)
	p("sandbox_branch", r.SandboxBranch)
	p("base_commit", r.BaseCommit)
	pi("pid", r.PID)
	p("tmux_session", orDash(store.Deref(r.TmuxSession)))
	p("started_at", r.StartedAt)
	p("finished_at", orDash(store.Deref(r.FinishedAt)))
	p("exit_reason", orDash(store.Deref(r.ExitReason)))
	pi("exit_code", r.ExitCode)
	last := "-"
	if !v.LastOutput.IsZero() {
		last = v.LastOutput.UTC().Format(time.RFC3339)
	}

	p("last_output_at", last)
	p("landing_status", orDash(store.Deref(r.LandingStatus)))
	printVerify(p, r)

	if r.LogsIncomplete != "" {
		p("logs", "INCOMPLETE: "+r.LogsIncomplete)
	}
	if r.RecordPending != "" {
		p("record", r.RecordPending)
	}

	if f := v.Forecast; f != nil {
		line := forecastText(f)
		if len(f.ConflictFiles) > 0 {
			line += "  (" + strings.Join(f.ConflictFiles, ", ") + ")"
		}
		p("forecast", line)
	}

	if l := r.Land; l != nil {
		p("land", strings.TrimSpace(l.State+"  "+l.Note))
	}
	if r.PromptSource != "" {
		p("prompt_source", r.PromptSource)
	}
	if r.PromptPath != "" {
		p("prompt_path", r.PromptPath)
	}

	p("include_untracked", fmt.Sprint(r.IncludeUntracked))

	if r.SetupStatus != "" {
		p("setup_status", r.SetupStatus+"  ("+orDash(r.SetupSource)+")")
	}
	if r.SetupUnapproved != "" {
		p("setup", "not approved, did not run: "+r.SetupUnapproved)
	}
	if i := r.Include; i != nil {
		p("include", fmt.Sprintf("%d files, %s (%d cloned) in %dms", i.Files, humanBytes(i.Bytes), i.Cloned, i.DurationMS))
	}
	if r.Sparse {
		p("sparse", "true")
	}

	p("disk", humanBytes(a.DiskBytes(r)))

	if r.SemanticStatus != "" {
		p("semantic_status", r.SemanticStatus+"  "+r.SemanticSummary)
	}

	if u := r.Usage; u != nil {
		cost := "-"
		if u.CostUSD != nil {
			cost = fmt.Sprintf("$%.4f", *u.CostUSD)
		}

		in := fmt.Sprintf("%d input", u.InputTokens)
		if u.CachedInputTokens > 0 {
			in += fmt.Sprintf(" (%d cached)", u.CachedInputTokens)
		}

		out := fmt.Sprintf("%d output", u.OutputTokens)
		if u.ReasoningTokens > 0 {
			out += fmt.Sprintf(" (%d reasoning)", u.ReasoningTokens)
		}

		turns := fmt.Sprintf("%d turns", u.Turns)
		if u.Turns == 1 {
			turns = "1 turn"
		}

		if u.InputTokens == 0 && u.OutputTokens == 0 && u.CostUSD == nil {
			// A headed claude counts turns through its hooks; its
			// tokens are never reported (not zero).
			p("usage", turns+", tokens not reported")
		} else {
			p("usage", fmt.Sprintf("%s, %s / %s tokens, %s", turns, in, out, cost))
		}
	} else if r.Mode == store.ModeHeadless {
		p("usage", "-")
	}

	if r.Error != "" {
		p("error", r.Error)
	}
	if v.CheckpointsError != "" {
		p("checkpoints", v.CheckpointsError)
	}

	p("logs", a.Store.SandboxLogsDir(r.InvocationID))
}

// isolationText says what walls an invocation in (a record from before
// the wall has none).
func isolationText(iso string) string {
	if iso == "bwrap" {
		return "bwrap (walled: it can change only its sandbox)"
	}
	return "none (not walled)"
}
