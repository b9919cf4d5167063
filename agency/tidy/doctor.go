package tidy

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/git-agency/git-agency/agency/internal/core"
	"github.com/git-agency/git-agency/errs"
	"github.com/git-agency/git-agency/runner"
	"github.com/git-agency/git-agency/runner/tmux"
	"github.com/git-agency/git-agency/store"
)

// Finding levels.
const (
	LevelOK      = "ok"
	LevelWarn    = "warn"    // worth knowing; not a failure
	LevelProblem = "problem" // something is wrong: doctor exits 1
)

// Finding is one result of `doctor`.
type Finding struct {
	Check   string `json:"check"` // git, tmux, runner, data_dir, records, sandboxes, worktrees, tmux_sessions, branches
	Level   string `json:"level"`
	Message string `json:"message"`
	Hint    string `json:"hint,omitempty"`
	Path    string `json:"path,omitempty"`
}

// MinGitVersion is the oldest git we support (merge-tree --write-tree).
const MinGitVersion = "2.38"

// Doctor checks the environment and this repository's records. It is a
// read: it changes nothing, and says what gc would settle (Settle).
func (a *Tidier) Doctor(ctx context.Context) []Finding {
	var out []Finding
	add := func(check, level, hint, path, format string, args ...any) {
		out = append(out, Finding{Check: check, Level: level, Message: fmt.Sprintf(format, args...), Hint: hint, Path: path})
	}
	a.checkGit(ctx, add)
	a.checkTmux(ctx, add)
	a.Host.CheckWall(ctx, add)
	a.checkRunners(ctx, add)
	a.checkDataDir(add)
	a.Host.CheckConfig(add)
	repoChecks := len(out)
	a.Host.CheckRelink(add)
	wts := a.checkWorktreeRecords(ctx, add)
	a.Host.CheckSetups(ctx, add, wts)
	invs, records := a.checkInvocationRecords(ctx, add)
	a.checkOrphanSandboxes(add, records)
	a.checkGoneSandboxBranches(ctx, add, records)
	a.checkVanishedTrees(add)
	a.Host.CheckHostStarts(add)
	a.Host.CheckCopiedEnvs(add, wts, records)
	a.checkTmuxSessions(ctx, add, records)
	left := a.leftovers()
	a.checkOrphanBranches(ctx, add, records, left)
	a.checkLeftovers(add, left)
	a.checkRecordFiles(add, invs)
	a.checkUndo(add)
	a.checkEscapes(ctx, add, records)

	// The repository's own checks say they ran and found nothing, whatever
	// the environment's checks above found (a missing runner program).
	problems := 0
	for _, f := range out[repoChecks:] {
		if f.Level == LevelProblem {
			problems++
		}
	}

	if problems == 0 {
		add("records", LevelOK, "", a.Store.RepoDir(), "%d worktree(s), %d invocation(s), no leftovers", len(wts), len(invs))
	}

	return out
}

// checkGit: git runs and is new enough for merge-tree --write-tree.
func (a *Tidier) checkGit(ctx context.Context, add addFinding) {
	if v, err := a.Repo.GitVersion(ctx); err != nil {
		add("git", LevelProblem, "install git 2.38 or later", "", "cannot run git: %v", err)
	} else if versionLess(v, MinGitVersion) {
		add("git", LevelProblem, "upgrade git to "+MinGitVersion+" or later", "", "git %s is too old: landing checks need merge-tree --write-tree (git %s)", v, MinGitVersion)
	} else {
		add("git", LevelOK, "", "", "git %s (worktrees, merge-tree --write-tree)", v)
	}
}

// checkTmux: tmux is there for headed agents (a warning without it).
func (a *Tidier) checkTmux(ctx context.Context, add addFinding) {
	if p, err := tmux.Available(); err != nil {
		add("tmux", LevelWarn, "install tmux 3.2+ for headed agents; headless agents (--headless) do not need it", "", "tmux not found: only headless agents can run")
	} else {
		add("tmux", LevelOK, "", p, "%s", tmuxVersion(ctx))
	}
}

// checkRunners: every runner's configuration and program.
func (a *Tidier) checkRunners(ctx context.Context, add addFinding) {
	def := runner.DefaultRunner
	if v, ok := a.Config.Get("agency.defaultRunner"); ok && v != "" {
		def = v
	}

	inWall := a.runnerWall(ctx)
	for _, name := range runner.Names(a.Config) {
		spec, err := runner.Lookup(a.Config, name)
		if err != nil {
			add("runner", LevelProblem, "fix git config agency.runner."+name+".*", "", "runner %s: %v", name, err)
			continue
		}

		p, err := spec.Find()
		_, configured := a.Config.Get("agency.runner." + name + ".command")
		switch {
		case err == nil:
			a.checkRunnerRuns(ctx, add, inWall, name, spec, p)
		case configured:
			add("runner", LevelProblem, "point git config agency.runner."+name+".command at an installed program", "", "runner %s: program %q not found", name, spec.Program)
		case name == def:
			add("runner", LevelWarn, "install it, or choose another with git config agency.defaultRunner <name>", "", "default runner %s: program %q not found", name, spec.Program)
		default:
			add("runner", LevelOK, "", "", "runner %s: not installed (optional)", name)
		}
	}
}

// checkWorktreeRecords: broken worktree records, present worktrees whose
// directory (moved with `git worktree move`, or removed) or marker is gone. It returns the scanned records.
func (a *Tidier) checkWorktreeRecords(ctx context.Context, add addFinding) []store.WorktreeEntry {
	wts, err := a.Store.ScanWorktrees()
	if err != nil {
		add("records", LevelProblem, "check the data directory's permissions", a.Store.IntegrationWorktreesDir(), "cannot scan worktree records: %v", err)
	}

	for _, e := range wts {
		if e.Broken && os.IsNotExist(e.Err) {
			continue // no meta.json: a leftover (checkLeftovers)
		}

		if e.Broken {
			add("records", LevelProblem, "inspect meta.json, or remove the record directory", e.Dir, "worktree record %s is broken: %v", e.ID, e.Err)
			continue
		}

		r := e.Record
		if r.State != store.StatePresent {
			continue
		}

		if _, err := os.Stat(r.TreePath); err != nil {
			if e := a.Host.TreeMoved(ctx, r); e != nil {
				add("worktrees", LevelProblem, e.Hint, r.TreePath, "%s", e.Msg)
				continue
			}
			add("worktrees", LevelProblem, "'git agency worktree rm "+r.Name+"' archives the record and prunes git's registration", r.TreePath,
				"worktree %q: its directory is gone", r.Name)
		} else if e := errs.As(a.Host.CheckOnBranch(ctx, r)); e != nil && e.Code == errs.EWrongBranch {
			add("worktrees", LevelProblem, e.Hint, r.TreePath, "%s", e.Msg)
		} else if !core.HasMarker(r.TreePath) {
			add("worktrees", LevelWarn, "'git agency agent start -w "+r.Name+"' writes it again when the tree has no .agency/ at all (a 'git clean -x' removes it)", r.TreePath,
				"worktree %q has no integration marker", r.Name)
		}
	}

	return wts
}

// checkInvocationRecords: broken invocation records, running ones whose
// sandbox is gone. It returns the scan and the records by id (after
// View; nil for a broken one).
func (a *Tidier) checkInvocationRecords(ctx context.Context, add addFinding) ([]store.InvocationEntry, map[string]*store.InvocationRecord) {
	invs, err := a.Store.ScanInvocationsChecked()
	if err != nil {
		add("records", LevelProblem, "check the data directory's permissions", a.Store.InvocationsDir(), "cannot scan invocation records: %v", err)
	}

	records := map[string]*store.InvocationRecord{}
	for _, e := range invs {
		if e.Broken && os.IsNotExist(e.Err) {
			continue // no meta.json: a leftover (checkLeftovers)
		}

		if e.Broken {
			records[e.ID] = nil
			add("records", LevelProblem, "inspect meta.json, or remove the record directory", e.Dir, "invocation record %s is broken: %v", e.ID, e.Err)
			continue
		}

		r := a.Host.View(ctx, e.Record)
		records[e.ID] = r

		if e.Record.Active() && !r.Active() {
			add("records", LevelWarn, "'git agency gc --yes' records it (and starts queued agents a free slot allows)", e.Dir,
				"invocation %s: its supervisor is gone and its outcome (%s) is not recorded yet", e.ID, r.Status)
		}

		if r.Active() {
			if _, err := os.Stat(a.Store.SandboxTreePath(r.InvocationID)); err != nil {
				add("sandboxes", LevelProblem, "stop it with 'git agency agent kill "+r.InvocationID+"'", a.Store.SandboxTreePath(r.InvocationID),
					"invocation %s is running but its sandbox is gone", r.InvocationID)
			}
		}
	}

	return invs, records
}

// checkOrphanSandboxes: sandboxes whose invocation is gone.
func (a *Tidier) checkOrphanSandboxes(add addFinding, records map[string]*store.InvocationRecord) {
	sbs, err := store.ReadIDDirs(a.Store.SandboxesDir())
	if err != nil {
		add("records", LevelProblem, "check the data directory's permissions", a.Store.SandboxesDir(), "cannot scan sandboxes: %v", err)
	}

	for _, id := range sbs {
		if _, ok := records[id]; !ok && !a.startInProgress(id) {
			add("sandboxes", LevelProblem, "'git agency gc' removes it (it keeps trees with uncommitted work unless --force)", a.Store.SandboxDir(id),
				"sandbox %s has no invocation record", id)
		}
	}
}

// checkVanishedTrees: worktrees of ours git still registers whose
// directory vanished.
func (a *Tidier) checkVanishedTrees(add addFinding) {
	regs, err := a.Repo.AdminWorktrees()
	if err != nil {
		return
	}

	for _, w := range regs {
		if !core.Inside(a.Store.RepoDir(), w.Path) {
			continue
		}
		if _, err := os.Stat(w.Path); os.IsNotExist(err) {
			add("worktrees", LevelProblem, "'git agency gc' prunes git's registration", w.Path,
				"git still registers a worktree whose directory is gone: %s", w.Path)
		}
	}
}

// checkTmuxSessions: agency-<id> sessions of this repository without a
// running record.
func (a *Tidier) checkTmuxSessions(ctx context.Context, add addFinding, records map[string]*store.InvocationRecord) {
	for _, s := range tmuxSessions(ctx) {
		id := strings.TrimPrefix(s, "agency-")
		r, ok := records[id]
		if ok && r != nil && r.Active() {
			continue
		}
		if !ok && !store.ValidID(id) {
			continue
		}
		if !ok && !a.sessionIsOurs(ctx, s) {
			continue // another repository's agent
		}

		add("tmux_sessions", LevelProblem, "'git agency gc' kills it; or 'tmux kill-session -t "+s+"'", "",
			"tmux session %s has no running invocation", s)
	}
}

// checkOrphanBranches: agency branches without a record (killed starts and
// creates), with whether their commits are on other branches.
func (a *Tidier) checkOrphanBranches(ctx context.Context, add addFinding, records map[string]*store.InvocationRecord, left []Leftover) {
	known := func(id string) bool { _, ok := records[id]; return ok }
	for _, o := range a.orphanBranches(ctx, left, known) {
		hint := "'git agency gc' deletes it: its commits are on other branches"
		if !o.Elsewhere {
			hint = "its commits are on no other branch: keep what you need, then 'git agency gc --force' deletes it"
		}
		add("branches", LevelProblem, hint, "", "branch %s: %s", o.Name, o.Reason)
	}
}

// checkLeftovers reports what killed writers left (see leftovers); gc
// removes it.
func (a *Tidier) checkLeftovers(add func(check, level, hint, path, format string, args ...any), left []Leftover) {
	for _, l := range left {
		what := "temp file"
		switch l.Kind {
		case GCInvocationDir:
			what = "invocation directory " + l.Invocation
		case GCWorktreeDir:
			what = "worktree directory " + l.Invocation
		case GCVerifyTree:
			what = "verify tree of " + l.Invocation
		case GCRetiredTree:
			what = "retired tree"
		case GCQueuedEnv:
			what = "kept environment of " + l.Invocation
		}

		add("leftovers", LevelProblem, "'git agency gc' removes it", l.Path, "%s: %s", what, l.Reason)
	}
}

// checkRecordFiles reports records that do not decode: repo.json, each
// sandbox's checkpoints.json (checkpoints fail while it is damaged) and
// each invocation's events.jsonl (garbage or cut lines).
func (a *Tidier) checkRecordFiles(add func(check, level, hint, path, format string, args ...any), invs []store.InvocationEntry) {
	var rr store.RepoRecord
	if err := store.ReadJSON(a.Store.RepoJSONPath(), &rr); err != nil && !os.IsNotExist(err) {
		add("records", LevelProblem, "remove it: the next command writes it again", a.Store.RepoJSONPath(), "repo.json is damaged: %v", err)
	}

	sbs, _ := store.ReadIDDirs(a.Store.SandboxesDir())
	for _, id := range sbs {
		if _, err := a.Store.ReadCheckpoints(id); err != nil {
			add("records", LevelProblem, "checkpoints of "+id+" fail until it is fixed: repair it, or move it aside (the snapshot refs stay and are listed)",
				a.Store.CheckpointsPath(id), "checkpoints.json of %s is damaged: %v", id, err)
		}
	}

	a.checkJSONL(add, invs)
}

// checkJSONL names the JSON-lines files git-agency appends to that hold
// damaged lines (cut short by a crash or a full disk, or garbage): the
// operation log, and each invocation's events, hook and stream files.
// Readers skip such lines and later appends start on a fresh line; the
// files are history, so nothing rewrites or removes them (gc neither).
func (a *Tidier) checkJSONL(add func(check, level, hint, path, format string, args ...any), invs []store.InvocationEntry) {
	const hint = "the damaged lines are skipped when reading; later lines are appended on fresh ones, and the file is kept as it is"
	report := func(path, what string, complete bool) {
		if n, err := store.DamagedLines(path, complete); err == nil && n > 0 {
			add("records", LevelWarn, hint, path, "%s has %d damaged line(s)", what, n)
		}
	}
	report(a.Store.OplogPath(), "oplog.jsonl", true)
	for _, e := range invs {
		report(a.Store.EventsPath(e.ID), "events.jsonl of "+e.ID, true)
		// A running agent's logs may end in a line being written.
		done := e.Record == nil || !e.Record.Active()
		logs := a.Store.SandboxLogsDir(e.ID)
		report(filepath.Join(logs, "hook.jsonl"), "logs/hook.jsonl of "+e.ID, done)
		report(filepath.Join(logs, core.StreamLog), "logs/"+core.StreamLog+" of "+e.ID, done)
	}
}

func (a *Tidier) checkDataDir(add func(check, level, hint, path, format string, args ...any)) {
	dir := a.Store.RepoDir()
	fi, err := os.Stat(dir)
	if err != nil {
		add("data_dir", LevelProblem, "set AGENCY_DATA_DIR or git config agency.dataDir to a writable directory", dir, "data directory: %v", err)
		return
	}

	f, err := os.CreateTemp(dir, ".doctor-*")
	if err != nil {
		add("data_dir", LevelProblem, "make it writable (chmod u+w), or set AGENCY_DATA_DIR", dir, "data directory is not writable: %v", err)
		return
	}

	f.Close()
	os.Remove(f.Name())

	if fi.Mode().Perm()&0o077 != 0 {
		add("data_dir", LevelWarn, "logs and prompts live here: chmod 700 "+dir, dir, "data directory is readable by others (%o)", fi.Mode().Perm())
		return
	}

	add("data_dir", LevelOK, "", dir, "data directory %s (writable, private)", a.Store.DataDir)
}

// sessionIsOurs tells whether a tmux session's pane runs in this
// repository's sandboxes.
func (a *Tidier) sessionIsOurs(ctx context.Context, session string) bool {
	ctx, cancel := context.WithTimeout(ctx, core.TmuxWait)
	defer cancel()
	dir, err := (&tmux.Client{}).PaneCurrentPath(ctx, tmux.PaneTarget(session))
	if err != nil {
		return false
	}
	return core.Inside(a.Store.SandboxesDir(), dir)
}

// tmuxSessions lists the sessions named agency-* on git-agency's tmux
// server (none when tmux or its server is absent), whatever $TMUX says.
func tmuxSessions(ctx context.Context) []string {
	if _, err := tmux.Available(); err != nil {
		return nil
	}

	ctx, cancel := context.WithTimeout(ctx, core.TmuxWait)
	defer cancel()
	list, err := (&tmux.Client{}).ListSessions(ctx, "agency-")
	if err != nil {
		return nil
	}

	return list
}

// tmuxVersion is `tmux -V` (bounded in time), or "tmux (version unknown)".
func tmuxVersion(ctx context.Context) string {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	v, err := (&tmux.Client{}).Version(ctx)
	if err != nil || v == "" {
		return "tmux (version unknown)"
	}
	return v
}

// versionLess compares dotted versions numerically ("2.39.5" < "2.40").
func versionLess(v, min string) bool {
	pv, pm := strings.Split(v, "."), strings.Split(min, ".")
	for i := 0; i < len(pm); i++ {
		var a, b int
		if i < len(pv) {
			a, _ = strconv.Atoi(strings.TrimLeft(pv[i], "v"))
		}

		b, _ = strconv.Atoi(pm[i])
		if a != b {
			return a < b
		}
	}

	return false
}
