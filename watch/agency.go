package watch

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/git-agency/git-agency/agency"
	"github.com/git-agency/git-agency/errs"
	"github.com/git-agency/git-agency/gitcore"
	"github.com/git-agency/git-agency/internal/subproc"
	"github.com/git-agency/git-agency/store"
)

// StatusStarting is the display status of an invocation still starting.
const StatusStarting = "starting"

// NewLoader reads snapshots of a's repository: worktree records, invocation
// records (as agency.ListInvocations shows them, with their derived display
// status). A refresh is a read: it starts, stops and rewrites nothing (a
// dead supervisor's outcome is derived in memory, which looks at /proc
// and, for a headed run, tmux); only the keys act, through the same agency
// calls as the CLI. all includes archived worktrees.
func NewLoader(a *agency.App, all bool) Loader {
	return func(ctx context.Context) (Snapshot, error) {
		return Load(ctx, a, all)
	}
}

// NewReposLoader reads snapshots of every repository of the data directory
// (`watch --all-repos`): each repository's worktrees, tagged with it, in
// the order of repos; a repository that is gone is one row saying so.
func NewReposLoader(repos []agency.RepoEntry, all bool) Loader {
	return func(ctx context.Context) (Snapshot, error) {
		snap := Snapshot{Taken: time.Now()}
		for i := range repos {
			r := &repos[i]
			var part Snapshot
			if r.App != nil {
				var err error
				if part, err = Load(ctx, r.App, all); err != nil {
					snap.Warning = r.Name + ": " + errs.As(err).Msg
					continue
				}
				snap.Taken = part.Taken
			} else {
				row := WorktreeRow{ID: r.RepoID, Name: r.Name, State: StateRepoGone, Path: r.Path}
				if views, err := r.Invocations(ctx); err == nil {
					for _, v := range views {
						row.Invocations = append(row.Invocations, invocationRow(v))
					}
				}
				part.Worktrees = []WorktreeRow{row}
			}
			for _, wt := range part.Worktrees {
				wt.RepoID, wt.RepoName, wt.RepoPath = r.RepoID, r.Name, r.Path
				for j := range wt.Invocations {
					wt.Invocations[j].RepoID = r.RepoID
				}
				snap.Worktrees = append(snap.Worktrees, wt)
			}
		}
		return snap, nil
	}
}

// Load is one snapshot (see NewLoader).
func Load(ctx context.Context, a *agency.App, all bool) (Snapshot, error) {
	snap := Snapshot{Taken: a.Now()}
	wts, err := a.Store.ScanWorktrees()
	if err != nil {
		return snap, err
	}
	invs, err := a.ListInvocations(ctx, agency.ListOptions{})
	if err != nil {
		return snap, err
	}
	index := map[string]int{}
	hidden := map[string]bool{}
	for _, e := range wts {
		row := WorktreeRow{ID: e.ID, State: "broken"}
		if r := e.Record; r != nil {
			if r.State == store.StateArchived && !all {
				hidden[e.ID] = true
				continue
			}
			row.Name, row.Branch, row.State, row.Path = r.Name, r.Branch, r.State, r.TreePath
			if r.State == store.StatePresent {
				if _, err := os.Stat(r.TreePath); os.IsNotExist(err) {
					row.State = "missing"
				}
			}
		}
		index[e.ID] = len(snap.Worktrees)
		snap.Worktrees = append(snap.Worktrees, row)
	}
	// Rows made to size: a thousand of them are appended every second.
	counts := make([]int, len(snap.Worktrees))
	for _, v := range invs {
		if v.Record != nil {
			if i, ok := index[v.Record.IntegrationWorktreeID]; ok {
				counts[i]++
			}
		}
	}
	for i, n := range counts {
		if n > 0 {
			snap.Worktrees[i].Invocations = make([]InvocationRow, 0, n)
		}
	}
	orphans := WorktreeRow{State: "orphaned"}
	for _, v := range invs {
		row := invocationRow(v)
		if v.Record == nil {
			orphans.Invocations = append(orphans.Invocations, row)
			continue
		}
		if hidden[row.WorktreeID] {
			continue
		}
		i, ok := index[row.WorktreeID]
		if !ok {
			orphans.Invocations = append(orphans.Invocations, row)
			continue
		}
		snap.Worktrees[i].Invocations = append(snap.Worktrees[i].Invocations, row)
	}
	if len(orphans.Invocations) > 0 {
		snap.Worktrees = append(snap.Worktrees, orphans)
	}
	for i := range snap.Worktrees {
		// Those waiting for the user first, then newest first (ids
		// begin with their start time). Ids are unique, so no two rows
		// compare equal and the order is total: a generic sort, not
		// sort.SliceStable's reflection (a fifth of a refresh at 1000
		// rows).
		slices.SortFunc(snap.Worktrees[i].Invocations, func(x, y InvocationRow) int {
			nx, ny := x.Display == StatusNeedsInput, y.Display == StatusNeedsInput
			if nx != ny {
				if nx {
					return -1
				}
				return 1
			}
			return strings.Compare(y.ID, x.ID)
		})
	}
	return snap, nil
}

func invocationRow(v agency.InvocationView) InvocationRow {
	row := InvocationRow{ID: v.ID, ShortID: store.ShortID(v.ID), Display: v.Display, QueuePlace: v.QueuePlace}
	r := v.Record
	if r == nil {
		row.Display = StatusBroken
		if v.Err != nil {
			row.Summary = strings.Join(strings.Fields(v.Err.Error()), " ")
		}
		return row
	}
	row.WorktreeID = r.IntegrationWorktreeID
	row.Runner, row.Mode, row.Status, row.Host = r.Runner, r.Mode, r.Status, r.Host
	row.StartedAt = parseTime(r.StartedAt)
	row.FinishedAt = parseTime(store.Deref(r.FinishedAt))
	row.SandboxPath = r.SandboxPath
	row.TmuxSession = store.Deref(r.TmuxSession)
	switch {
	case r.Status == store.StatusFailed && r.ExitCode != nil:
		row.Summary = fmt.Sprintf("exit %d", *r.ExitCode)
	case r.Status == store.StatusFailed || r.Status == store.StatusFinished:
		if reason := store.Deref(r.ExitReason); reason != "" && reason != store.ExitExited {
			row.Summary = reason
		}
	}
	if r.SemanticSummary != "" {
		row.Summary = strings.TrimSpace(row.Summary + " " + agency.TermEscape(r.SemanticSummary))
	}
	row.Usage = usageText(r)
	row.Apply = row.Display == StatusReadyApply
	row.Display = verifyDisplay(row.Display, r)
	if f := v.Forecast; f != nil {
		for _, p := range f.ConflictsWith {
			if p != agency.ConflictsIntegration {
				p = store.ShortID(p)
			}
			row.ConflictsWith = append(row.ConflictsWith, p)
		}
		row.ConflictFiles = f.ConflictFiles
		row.LandRefused = f.Refused
	}
	return row
}

// verifyDisplay is a ready row's display when its latest check did not
// pass: failed, running, cancelled or could not run (not ready, each its
// own status).
func verifyDisplay(display string, r *store.InvocationRecord) string {
	if display != StatusReady && display != StatusReadyApply {
		return display
	}
	switch agency.VerifyStatusOf(r) {
	case store.VerifyFailed:
		return StatusVerifyFailed
	case store.VerifyRunning:
		return StatusVerifying
	case store.VerifyCancelled:
		return StatusVerifyCancelled
	case store.VerifyErrored:
		return StatusVerifyError
	}
	return display
}

func parseTime(s string) time.Time {
	if s == "" {
		return time.Time{} // a running invocation's end: no error to build
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}
	}
	return t
}

// AgencyActions are the keys' actions on a's repository.
type AgencyActions struct {
	App *agency.App
	// Apps are the repositories of `watch --all-repos`, by repo id: a
	// row's action runs on its own repository.
	Apps map[string]*agency.App
	// StopWait bounds how long stop and kill wait for the agent to end
	// before reporting.
	StopWait time.Duration
}

// app is the repository a row belongs to.
func (x *AgencyActions) app(repoID string) (*agency.App, error) {
	if a := x.Apps[repoID]; a != nil {
		return a, nil
	}
	if x.App == nil || (repoID != "" && x.Apps != nil) {
		return nil, errs.RepoGone(repoID)
	}
	return x.App, nil
}

func (x *AgencyActions) record(inv InvocationRow) (*store.InvocationRecord, error) {
	a, err := x.app(inv.RepoID)
	if err != nil {
		return nil, err
	}
	rec, err := a.Store.ReadInvocation(inv.ID)
	if err != nil {
		if os.IsNotExist(err) {
			return nil, errs.NotFound("invocation", inv.ID)
		}
		return nil, errs.StoreCorrupt(a.Store.InvocationMetaPath(inv.ID), err)
	}
	return rec, nil
}

// Attach implements Actions.
func (x *AgencyActions) Attach(ctx context.Context, inv InvocationRow) (*subproc.Terminal, error) {
	rec, err := x.record(inv)
	if err != nil {
		return nil, err
	}
	if rec.Mode != store.ModeHeaded {
		return nil, errs.NotHeaded(inv.ShortID)
	}
	if !rec.Active() {
		return nil, errs.SessionGone(inv.ShortID, rec.Status)
	}
	if rec.Host != "" {
		// ssh -t; the host's attach joins its tmux session there.
		a, _ := x.app(inv.RepoID)
		return a.HostAttachCmd(ctx, rec)
	}
	if store.Deref(rec.TmuxSession) == "" {
		return nil, errs.NoSession(inv.ShortID)
	}
	a, _ := x.app(inv.RepoID)
	return a.SessionAttachCmd(ctx, rec)
}

func (x *AgencyActions) worktreeDir(wt WorktreeRow) (string, error) {
	if wt.Path == "" {
		return "", errs.NotFound("worktree", wt.ID)
	}
	if _, err := os.Stat(wt.Path); err != nil {
		return "", errs.TreeGone(wt.Name, wt.Path)
	}
	return wt.Path, nil
}

// Open implements Actions.
func (x *AgencyActions) Open(ctx context.Context, wt WorktreeRow) (*subproc.Terminal, error) {
	dir, err := x.worktreeDir(wt)
	if err != nil {
		return nil, err
	}
	a, err := x.app(wt.RepoID)
	if err != nil {
		return nil, err
	}
	editor, err := a.Editor("")
	if err != nil {
		return nil, err
	}
	return agency.EditorCmd(editor, dir), nil
}

// Shell implements Actions.
func (x *AgencyActions) Shell(ctx context.Context, wt WorktreeRow) (*subproc.Terminal, error) {
	dir, err := x.worktreeDir(wt)
	if err != nil {
		return nil, err
	}
	a, err := x.app(wt.RepoID)
	if err != nil {
		return nil, err
	}
	return agency.ShellCmd(a.Getenv, dir), nil
}

// Diff implements Actions: the sandbox's commits and their patch, then its
// uncommitted work.
func (x *AgencyActions) Diff(ctx context.Context, inv InvocationRow) (string, error) {
	a, err := x.app(inv.RepoID)
	if err != nil {
		return "", err
	}
	d, err := a.Diff(ctx, inv.ID, gitcore.DiffOptions{})
	if err != nil {
		return "", err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "## commits: %d\n%s\n%s\n", len(d.Commits), d.Log, d.Patch)
	if len(d.UncommittedFiles) > 0 {
		fmt.Fprintf(&b, "## uncommitted changes in the sandbox: %d file(s)\n%s", len(d.UncommittedFiles), d.Uncommitted)
	}
	if len(d.Denied) > 0 {
		fmt.Fprintf(&b, "## left out, denylisted untracked files: %s\n", strings.Join(d.Denied, " "))
	}
	return b.String(), nil
}

// logTail is how much of each log the logs view reads.
const logTail = 256 << 10

// Logs implements Actions: the readable events (or the runner's own
// output, or a headed run's screen), then its stderr.
func (x *AgencyActions) Logs(ctx context.Context, inv InvocationRow) (string, error) {
	rec, err := x.record(inv)
	if err != nil {
		return "", err
	}
	a, _ := x.app(inv.RepoID)
	text := logText(rec, a.LogText(ctx, rec, logTail))
	if strings.TrimSpace(text) == "" {
		return "(no output yet)", nil
	}
	if !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	return text, nil
}

// VerifyLog implements Actions: the log of the invocation's latest verify
// (agency.verify run on its land's candidate).
func (x *AgencyActions) VerifyLog(ctx context.Context, inv InvocationRow) (string, error) {
	rec, err := x.record(inv)
	if err != nil {
		return "", err
	}
	a, _ := x.app(inv.RepoID)
	text := agency.TermEscape(strings.ReplaceAll(a.VerifyLogText(rec, logTail), "\r", ""))
	if strings.TrimSpace(text) == "" {
		return "(never verified: set agency.verify and land it)", nil
	}
	return text, nil
}

// Land implements Actions.
func (x *AgencyActions) Land(ctx context.Context, inv InvocationRow) (string, error) {
	a, err := x.app(inv.RepoID)
	if err != nil {
		return "", err
	}
	res, err := a.Land(ctx, agency.LandOptions{Query: inv.ID})
	if err != nil {
		return "", err
	}
	return res.Report()[0], nil
}

// ApplyStat implements Actions: the diffstat of the sandbox's uncommitted
// work, after a line counting its commits (when it has any).
func (x *AgencyActions) ApplyStat(ctx context.Context, inv InvocationRow) ([]string, error) {
	a, err := x.app(inv.RepoID)
	if err != nil {
		return nil, err
	}
	d, err := a.Diff(ctx, inv.ID, gitcore.DiffOptions{Stat: true})
	if err != nil {
		return nil, err
	}
	var out []string
	if n := len(d.Commits); n > 0 {
		out = append(out, fmt.Sprintf("%s on its branch, and uncommitted:", agency.Plural(n, "commit")))
	}
	for _, l := range strings.Split(strings.TrimRight(string(d.Uncommitted), "\n"), "\n") {
		if l != "" {
			out = append(out, l)
		}
	}
	if len(d.UncommittedFiles) == 0 {
		out = append(out, "no uncommitted changes")
	}
	if len(d.Denied) > 0 {
		out = append(out, "left out, denylisted: "+strings.Join(d.Denied, " "))
	}
	return out, nil
}

// LandApply implements Actions: land with --apply.
func (x *AgencyActions) LandApply(ctx context.Context, inv InvocationRow) (string, error) {
	a, err := x.app(inv.RepoID)
	if err != nil {
		return "", err
	}
	// An agent on a host: its host makes the uncommitted work a commit.
	if err := a.HostApplyAll(ctx, []string{inv.ID}); err != nil {
		return "", err
	}
	res, err := a.Land(ctx, agency.LandOptions{Query: inv.ID, Apply: true})
	if err != nil {
		return "", err
	}
	return res.Report()[0], nil
}

// Discard implements Actions.
func (x *AgencyActions) Discard(ctx context.Context, inv InvocationRow) (string, error) {
	a, err := x.app(inv.RepoID)
	if err != nil {
		return "", err
	}
	if rec, err := x.record(inv); err == nil && rec.Host != "" {
		// Its host stops it and removes its sandbox there.
		if code, err := a.ActOnHost(ctx, rec, io.Discard, io.Discard, "discard", rec.InvocationID); err != nil || code != 0 {
			return "", hostActErr(rec, "discard", code, err)
		}
		if _, err := a.DiscardHostRecord(ctx, rec.InvocationID); err != nil {
			return "", err
		}
		return "discarded " + inv.ShortID + " on " + rec.Host, nil
	}
	res, err := a.Discard(ctx, inv.ID)
	if err != nil {
		return "", err
	}
	return res.Report()[0], nil
}

// Stop implements Actions.
func (x *AgencyActions) Stop(ctx context.Context, inv InvocationRow) (string, error) {
	return x.stop(ctx, inv, false)
}

// Kill implements Actions.
func (x *AgencyActions) Kill(ctx context.Context, inv InvocationRow) (string, error) {
	return x.stop(ctx, inv, true)
}

func (x *AgencyActions) stop(ctx context.Context, inv InvocationRow, kill bool) (string, error) {
	rec, err := x.record(inv)
	if err != nil {
		return "", err
	}
	wait := x.StopWait
	if wait == 0 {
		wait = 3 * time.Second
	}
	a, _ := x.app(inv.RepoID)
	verb, done := "stop", "stopped"
	if kill {
		verb, done = "kill", "killed"
	}
	if rec.Host != "" {
		// Its host's supervisor owns it: the host stops it.
		if code, err := a.ActOnHost(ctx, rec, io.Discard, io.Discard, verb, rec.InvocationID); err != nil || code != 0 {
			return "", hostActErr(rec, verb, code, err)
		}
		rec, err = a.Store.ReadInvocation(rec.InvocationID)
	} else {
		rec, err = a.Stop(ctx, a.Reconcile(ctx, rec), kill, wait)
	}
	if err != nil {
		return "", err
	}
	if rec != nil && rec.Active() {
		return fmt.Sprintf("%s requested for %s; it is still %s", verb, inv.ShortID, rec.Status), nil
	}
	return done + " " + inv.ShortID, nil
}

// hostActErr is the error of an action its host refused or could not run.
func hostActErr(rec *store.InvocationRecord, verb string, code int, err error) error {
	if err != nil {
		return err
	}
	return errs.HostFailed(rec.Host, "agent "+verb, code, "")
}

// usageText is a row's usage in short: the conversation's turns once it
// had a follow-up (agent send), and its cost when the runner reports one.
func usageText(r *store.InvocationRecord) string {
	var parts []string
	if r.Turns > 1 {
		parts = append(parts, fmt.Sprintf("%d turns", r.Turns))
	}
	if r.Usage != nil && r.Usage.CostUSD != nil {
		parts = append(parts, fmt.Sprintf("$%.4f", *r.Usage.CostUSD))
	}
	return strings.Join(parts, " · ")
}

// logText is an invocation's log as watch shows it: a headed run's screen
// without its drawing, anything else with the agent's control characters
// escaped (agency.TermEscape), so that none reaches the terminal.
func logText(rec *store.InvocationRecord, text string) string {
	text = strings.ReplaceAll(text, "\r", "")
	if rec.Mode == store.ModeHeaded {
		text = ansi.Strip(text)
	}
	return agency.TermEscape(text)
}
