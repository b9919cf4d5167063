package agency

import (
	"context"
	"github.com/git-agency/git-agency/agency/internal/core"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/git-agency/git-agency/errs"
	"github.com/git-agency/git-agency/runner"
	"github.com/git-agency/git-agency/store"
	"github.com/git-agency/git-agency/wall"
)

// isolation decides what walls a new invocation in (agency.isolate,
// wall.Decide): "bwrap", or "none" for off and for auto where bubblewrap
// cannot make a wall (said once as a warning). Under bwrap, a machine
// without a working bubblewrap refuses the start before anything is made.
func (a *App) isolation(ctx context.Context) (string, error) {
	ws, err := wall.SettingsFromConfig(a.Config)
	if err != nil {
		return "", err
	}
	if ws.Mode == wall.IsolateOff {
		return wall.IsolationNone, nil
	}

	return a.isolationFrom(ws, wall.Probe(ctx))
}

// isolationPlan is what walls a new invocation in, before its wall was
// tried: "bwrap" wherever bubblewrap is installed, else what isolation
// says of a machine without it ("none" with a warning under auto, the
// refusal under bwrap: before anything is made); "none" for off. Whether
// bubblewrap works is told by the invocation's own trial run (tryWall),
// which the probe only explains when it fails: a start whose wall comes
// up runs bubblewrap once before its agent, not twice.
func (a *App) isolationPlan() (string, error) {
	ws, err := wall.SettingsFromConfig(a.Config)
	if err != nil {
		return "", err
	}
	if ws.Mode == wall.IsolateOff {
		return wall.IsolationNone, nil
	}

	if check := wall.Installed(); !check.OK() {
		return a.isolationFrom(ws, check)
	}
	return wall.IsolateBwrap, nil
}

// warnProcLimit says, to App.Warn, when agency.isolate.maxProcs cannot be
// enforced for a walled agent.
func (a *App) warnProcLimit() {
	ws, err := wall.SettingsFromConfig(a.Config)
	if err != nil || a.Warn == nil {
		return
	}
	if w := wall.ProcLimitWarning(ws); w != nil {
		a.Warn(w)
	}
}

// isolationFrom is isolation's answer once bubblewrap was probed (check),
// its warning given to App.Warn.
func (a *App) isolationFrom(ws wall.Settings, check wall.Check) (string, error) {
	iso, warning, err := wall.Decide(ws, check)
	if iso == wall.IsolateBwrap {
		warning = wall.ProcLimitWarning(ws)
	}

	if warning != nil && a.Warn != nil {
		a.Warn(warning)
	}

	return iso, err
}

// checkWall: bubblewrap can wall the agents in (agency.isolate). Under
// auto a machine where it cannot is a warning (agents run unwalled),
// under bwrap a problem (no agent can start).
func (a *App) checkWall(ctx context.Context, add addFinding) {
	ws, err := wall.SettingsFromConfig(a.Config)
	if err != nil {
		e := errs.As(err)
		add("config", LevelProblem, e.Hint, "", "%s (agent start fails with E_CONFIG)", e.Msg)
		return
	}

	if ws.Mode == wall.IsolateOff {
		add("wall", LevelWarn, "git config agency.isolate auto walls them where bubblewrap works", "", "agency.isolate is off: agents run unwalled and can change anything you can")
		return
	}

	check := wall.Probe(ctx)
	switch {
	case check.OK():
		add("wall", LevelOK, "", check.Bwrap, "bubblewrap walls every agent in (agency.isolate %s)", ws.Mode)
		if w := wall.ProcLimitWarning(ws); w != nil {
			e := errs.As(w)
			add("wall", LevelWarn, e.Hint, "", "%s", e.Msg)
		}
	case ws.Mode == wall.IsolateBwrap:
		add("wall", LevelProblem, errs.WallFix(check.Cause), check.Bwrap, "%s: agency.isolate is bwrap, so no agent can start", errs.WallWhy(check.Cause, check.Detail))
	default:
		add("wall", LevelWarn, errs.WallFix(check.Cause), check.Bwrap, "%s: agents run unwalled (agency.isolate auto)", errs.WallWhy(check.Cause, check.Detail))
	}
}

// checkRefsLogged refuses a land whose integration branch or sandbox
// branch was moved behind its reflog's back (gitcore.ReflogBreak): by
// writing its file, as an agent might do to a ref the wall could not
// cover (one created after its wall went up, or a loose ref shadowing a
// packed one). A branch without a reflog cannot be checked.
func (a *App) checkRefsLogged(branch, tip string) error {
	if expected, found, broken := a.Repo.ReflogBreak(branch, tip, a.Now()); broken {
		return errs.RefMoved(branch, tip, expected, found)
	}
	return nil
}

// Wall is the wall of invocation rec, nil when it runs unwalled. Any
// command run for the invocation (a verify) runs as w.Command(argv).
func (a *App) Wall(ctx context.Context, rec *store.InvocationRecord) (*wall.Wall, error) {
	w, err := wall.OfRecord(a.Store, a.Repo.CommonDir, a.Config, rec, core.AgencyExe())
	if err != nil {
		return nil, err
	}
	return w, wall.Prepare(ctx, a.Store, a.Repo, w, rec.InvocationID)
}

// tryWall prepares rec's wall (its own git directory and agent state)
// and, with trial, starts it once around `true`, so a wall that cannot
// start fails the start (which then removes what it made) with
// bubblewrap's own reason (wallFailed). Without trial the agent's own
// wall tells (startSupervisor).
func (a *App) tryWall(ctx context.Context, rec *store.InvocationRecord, trial bool) error {
	if rec.Isolation != wall.IsolateBwrap {
		return nil
	}
	if err := a.fail(FPStartWall); err != nil {
		return err
	}

	a.makeGitDirs()
	w, err := a.Wall(ctx, rec)
	if err == nil && trial {
		err = wall.Try(ctx, w)
	}
	if err == nil {
		a.warnProcLimit()
		return nil
	}
	return a.wallFailed(ctx, rec, err)
}

// wallFailed answers rec's wall failing to start (err): only then is
// bubblewrap probed, to tell a machine where it cannot make any wall
// (isolationFrom: under auto the start goes on unwalled, said as a
// warning, and rec is made unwalled, what its wall made removed; under
// bwrap it is refused, E_WALL_UNAVAILABLE) from this invocation's wall
// failing (E_WALL_FAILED). Any other error is returned as it is.
func (a *App) wallFailed(ctx context.Context, rec *store.InvocationRecord, err error) error {
	if !errs.Is(err, errs.EWallFailed) || ctx.Err() != nil {
		return err
	}

	check := wall.Probe(ctx)
	if check.OK() {
		return err
	}

	ws, serr := wall.SettingsFromConfig(a.Config)
	if serr != nil {
		return serr
	}
	iso, derr := a.isolationFrom(ws, check)
	if derr != nil {
		return derr
	}

	wall.Unprepare(a.Store, rec.InvocationID)
	rec.Isolation = iso
	return nil
}

// makeGitDirs makes rr-cache in the common git directory when
// rerere.enabled is true and it is missing, as git itself does at the
// first commit under that setting. Inside the wall the common git
// directory is read-only, so an agent's `git commit` there could not make
// it and would fail. When it cannot be made here either, the agent's
// commit says why.
func (a *App) makeGitDirs() {
	if on, _ := a.Config.Bool("rerere.enabled", false); on {
		// When it cannot be made here either, the agent's commit says why.
		_ = os.Mkdir(filepath.Join(a.Repo.CommonDir, "rr-cache"), 0o777)
	}
}

// wallReports is whether the start of rec leaves it to the agent's own
// wall to say that it came up, rather than trying the wall first (a
// trial run of bubblewrap, about as costly as the agent's own): for a
// walled headless agent that starts now, with no setup script. Its
// supervisor runs the agent first thing and tells the start, which holds
// the lock until then (runner.Supervisor.WallReport). A setup script or a
// headed agent (whose wall runs in its tmux pane) is tried first.
func (a *App) wallReports(rec *store.InvocationRecord, queued bool) bool {
	if rec.Isolation != wall.IsolateBwrap || rec.Mode != store.ModeHeadless || queued {
		return false
	}
	if rec.SetupScript != "" || rec.SetupSource != "" {
		return false
	}
	setup, _ := a.Config.Get("agency.setup")
	return setup == ""
}

// startSupervisor spawns rec's supervisor. With report, the agent's own
// wall says whether it came up, and one that did not is a failed trial
// (wallFailed): the start fails, or, under auto where bubblewrap cannot
// wall, the agent runs unwalled after all: its command made again
// (command), the failed wall's logs removed, with a supervisor of its own.
func (a *App) startSupervisor(ctx context.Context, rec *store.InvocationRecord, report bool, command func(string) ([]string, error)) error {
	err := a.spawnSupervisor(ctx, rec, report)
	if err == nil || !report || !errs.Is(err, errs.EWallFailed) {
		return err
	}
	if err := a.wallFailed(ctx, rec, err); err != nil {
		return err
	}

	if rec.Command, err = command(rec.Isolation); err != nil {
		return err
	}
	for _, name := range []string{RawLog, StderrLog} {
		if err := os.Remove(filepath.Join(a.Store.SandboxLogsDir(rec.InvocationID), name)); err != nil && !os.IsNotExist(err) {
			return errs.IO("remove", name, err)
		}
	}
	return a.spawnSupervisor(ctx, rec, false)
}

// failAfterSpawn is FPStartWallReport, for a start that waits for its
// supervisor's word on the wall (report): an injected failure ends the
// supervisor (sup) and its agent, whose start then removes what it made.
func (a *App) failAfterSpawn(report bool, sup *runner.Spawned) error {
	if !report {
		return nil
	}
	if err := a.fail(FPStartWallReport); err != nil {
		sup.Abort()
		return err
	}
	return nil
}

// wallReportWait bounds how long a start waits for its supervisor's word
// on the agent's wall (the supervisor waits up to 30 s for the wall).
const wallReportWait = 45 * time.Second

// wallReportPipe is the pipe a supervisor tells its start about the wall
// through: heard is read here, told is the supervisor's. Both nil without
// report (Close is safe on nil).
func wallReportPipe(report bool) (heard, told *os.File, err error) {
	if !report {
		return nil, nil, nil
	}
	heard, told, err = os.Pipe()
	if err != nil {
		return nil, nil, errs.IO("create", "a pipe", err)
	}
	return heard, told, nil
}

// awaitWallReport reads what the supervisor says of its agent's wall
// (runner.WallUp, or runner.WallFail and bubblewrap's message) until it
// closes the pipe: failed, with the message, when the wall failed. A
// supervisor that ended or went on without a word (an earlier failure it
// records itself), an interrupt and wallReportWait all go on as a wall
// that came up: the supervisor records what became of the agent.
func awaitWallReport(ctx context.Context, heard *os.File) (msg string, failed bool) {
	if heard == nil {
		return "", false
	}
	_ = heard.SetReadDeadline(time.Now().Add(wallReportWait))
	stop := context.AfterFunc(ctx, func() { _ = heard.SetReadDeadline(time.Now()) })
	defer stop()

	b, _ := io.ReadAll(io.LimitReader(heard, 4096))
	return strings.CutPrefix(strings.TrimSpace(string(b)), runner.WallFail)
}
