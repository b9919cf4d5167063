package agency

import (
	"cmp"
	"context"
	"errors"
	"github.com/git-agency/git-agency/agency/internal/core"
	"os"
	"path/filepath"
	"time"

	"github.com/git-agency/git-agency/checkpoint"
	"github.com/git-agency/git-agency/errs"
	"github.com/git-agency/git-agency/runner"
	"github.com/git-agency/git-agency/runner/tmux"
	"github.com/git-agency/git-agency/store"
	"github.com/git-agency/git-agency/wall"
)

// StartOptions are the inputs of `agent start` (core.StartOptions: the
// host side starts too).
type StartOptions = core.StartOptions

// Failpoints of StartInvocation.
const (
	FPStartBeforeLock   = "agent-start:before-lock"
	FPStartAfterMkdir   = "agent-start:after-mkdir"
	FPStartAfterSandbox = "agent-start:after-sandbox"
	FPStartSpawn        = "agent-start:spawn"
	FPStartWall         = "agent-start:wall"
	// FPStartWallReport: the supervisor runs, recorded; the start has not
	// heard from its agent's wall yet.
	FPStartWallReport = "agent-start:wall-report"
	// FPStartRecordSync: the first meta.json's temp file is written and
	// fsynced, not yet renamed.
	FPStartRecordSync = "agent-start:record-fsync"
)

// lockedCallTimeout bounds a git call made while the repo lock is held, so
// that a hung git cannot keep every other command waiting for the lock:
// generous, but never without end.
const lockedCallTimeout = 2 * time.Minute

// SelfExe is the running program (runner.SelfExe); the supervisor is
// started as git-agency whichever program starts it (runner.AgencyExe).
func SelfExe() string { return runner.SelfExe() }

// PrepareStart checks everything that can be checked before anything is
// created: the worktree, the runner and its program, the prompt.
func (a *App) PrepareStart(ctx context.Context, opts StartOptions) (*store.WorktreeRecord, runner.Spec, error) {
	wt, err := a.ResolvePresentWorktree(opts.Worktree)
	if err != nil {
		return nil, runner.Spec{}, err
	}
	if wt, err = a.stillPresent(ctx, wt); err != nil {
		return nil, runner.Spec{}, err
	}
	if err := a.CheckOnBranch(ctx, wt); err != nil {
		return nil, runner.Spec{}, err
	}
	if err := a.restoreMarker(wt); err != nil {
		return nil, runner.Spec{}, err
	}

	spec, err := a.PrepareRunner(opts)
	if err != nil {
		return nil, runner.Spec{}, err
	}

	return wt, spec, nil
}

// stillPresent re-reads a worktree record and checks its tree is there:
// E_ARCHIVED once a worktree rm archived it, E_NOT_FOUND when the record
// or the directory is gone (never git's "chdir: no such file").
func (a *App) stillPresent(ctx context.Context, wt *store.WorktreeRecord) (*store.WorktreeRecord, error) {
	cur, err := a.WorktreeByID(wt.WorktreeID)
	if err != nil {
		return nil, err
	}
	if cur.State != store.StatePresent {
		return nil, errs.Archived(cur.Name, cur.WorktreeID)
	}
	if err := a.treeGoneErr(ctx, cur); err != nil {
		return nil, err
	}

	return cur, nil
}

// PrepareRunner checks what a start needs besides its worktree: the runner
// and its program, the checkpoint settings, tmux for a headed run. `run`
// checks it before it creates the worktree.
func (a *App) PrepareRunner(opts StartOptions) (runner.Spec, error) {
	spec, err := runner.Lookup(a.Config, opts.Runner)
	if err != nil {
		return runner.Spec{}, err
	}
	if _, err := spec.Find(); err != nil {
		return runner.Spec{}, err
	}

	// A bad checkpoint setting is an error now, not a surprise later.
	if _, err := runner.CheckpointTimingFromConfig(a.Config); err != nil {
		return runner.Spec{}, err
	}
	if _, err := runner.NotifyTimeoutFromConfig(a.Config); err != nil {
		return runner.Spec{}, err
	}
	if _, _, err := checkpoint.LeaveOutFromConfig(a.Config); err != nil {
		return runner.Spec{}, err
	}

	if !opts.Headless {
		if _, err := tmux.Available(); err != nil {
			return runner.Spec{}, tmuxNotFound()
		}
	}

	return spec, nil
}

// StartInvocation creates the invocation record and its sandbox, then
// spawns the supervisor. Any failure removes what was made.
func (a *App) StartInvocation(ctx context.Context, opts StartOptions) (*store.InvocationRecord, error) {
	wt, spec, err := a.PrepareStart(ctx, opts)
	if err != nil {
		return nil, err
	}
	if opts.Headless && opts.Prompt == "" {
		return nil, errs.New(errs.EPromptEmpty, "pass --prompt or --prompt-file", "the prompt is empty")
	}

	// An id has a fixed length, so a placeholder's path measures the same.
	if err := checkPrompt(spec, opts, a.plannedRunnerPaths(a.Store.SandboxTreePath(store.NewID(a.Now())))); err != nil {
		return nil, err
	}

	maxActive, err := a.MaxActive()
	if err != nil {
		return nil, err
	}

	queue, err := a.queueConfig(opts.Queue)
	if err != nil {
		return nil, err
	}

	// Whether bubblewrap works is told by the invocation's own wall
	// (tryWall); a machine without it at all is told now.
	isolation, err := a.isolationPlan()
	if err != nil {
		return nil, err
	}

	if err := a.fail(FPStartBeforeLock); err != nil {
		return nil, err
	}

	ctx, unlock, err := a.lockWork(ctx)
	if err != nil {
		return nil, err
	}
	defer unlock()

	// A worktree rm may have run since PrepareStart: look again under the
	// lock, which rm holds while it removes and archives.
	if wt, err = a.stillPresent(ctx, wt); err != nil {
		return nil, err
	}

	queued := false
	if full, n, err := a.full(ctx, maxActive); err != nil {
		return nil, err
	} else if full {
		if !queue {
			return nil, errs.TooManyActive(n, maxActive)
		}
		queued = true
	}

	inv, err := store.MkdirID(a.Store.InvocationsDir(), a.Now())
	if err != nil {
		return nil, err
	}
	if err := markCreator(a.Store.InvocationDir(inv)); err != nil {
		return nil, withCleanup(err, store.RemoveAllInside(a.Store.InvocationsDir(), a.Store.InvocationDir(inv)))
	}

	sandboxMade := false
	rec := &store.InvocationRecord{}
	cleanup := func() error {
		var sandbox error
		if sandboxMade {
			sandbox = a.undoAdd(ctx, true, a.Store.SandboxesDir(), a.Store.SandboxDir(inv), a.Store.SandboxTreePath(inv), store.SandboxBranch(inv))
		}
		return errors.Join(sandbox, store.RemoveAllInside(a.Store.InvocationsDir(), a.Store.InvocationDir(inv)))
	}
	if err := a.fail(FPStartAfterMkdir); err != nil {
		return nil, withCleanup(err, cleanup())
	}

	made, err := a.createSandboxWith(ctx, wt, inv, SandboxOptions{Full: opts.Full, Base: opts.Base})
	if err != nil {
		return nil, withCleanup(err, cleanup())
	}

	sandboxMade = true

	base := made.Base
	tree := a.Store.SandboxTreePath(inv)
	mode := store.ModeHeaded
	if opts.Headless {
		mode = store.ModeHeadless
	}

	// A runner that can be told its conversation id up front (claude's
	// --session-id) gets one, so the id is known even for a headed run that
	// prints no stream, and a follow-up can always resume it.
	sessionID := runner.NewSessionID()
	startArgs := spec.StartArgs(opts.RunnerArgs, sessionID)

	if len(startArgs) == 0 {
		sessionID = ""
	}

	// Inside the wall a built-in works alone (runner.Spec.Walled).
	command := func(isolation string) ([]string, error) {
		s := spec.Walled(isolation == wall.IsolateBwrap, opts.Headless, opts.RunnerArgs)
		argv := s.Argv(opts.Headless, append(append([]string(nil), opts.RunnerArgs...), startArgs...), opts.Prompt, a.runnerPaths(tree))
		return a.withHooks(s, opts.Headless, inv, argv)
	}

	*rec = store.InvocationRecord{
		SchemaVersion:         store.SchemaVersion,
		InvocationID:          inv,
		HostStartKey:          opts.HostStartKey,
		IntegrationWorktreeID: wt.WorktreeID,
		RepoID:                a.Store.RepoID,
		SandboxPath:           tree,
		SandboxBranch:         store.SandboxBranch(inv),
		BaseCommit:            cmp.Or(opts.LineageBase, base),
		Runner:                spec.Name,
		Mode:                  mode,
		RunnerArgs:            opts.RunnerArgs,
		SessionID:             sessionID,
		Turns:                 1,
		StartedAt:             a.now(),
		Status:                store.StatusStarting,
		PromptSource:          opts.PromptSource,
		PromptPath:            opts.PromptPath,
		IncludeUntracked:      !opts.NoIncludeUntracked,
		Include:               made.Include,
		Sparse:                made.Sparse,
		Isolation:             isolation,
	}

	// The setup is read from the sandbox: exactly what will run there.
	if err := a.sandboxSetup(ctx, rec); err != nil {
		return nil, withCleanup(err, cleanup())
	}
	if rec.Command, err = command(isolation); err != nil {
		return nil, withCleanup(err, cleanup())
	}

	if mode == store.ModeHeaded {
		rec.TmuxSession = store.Str(runner.SessionName(inv))
		rec.WindowWidth, rec.WindowHeight = opts.WindowWidth, opts.WindowHeight
	}

	if queued {
		rec.Status = store.StatusQueued
		// Nanoseconds, fixed width: the queue's order within a second.
		rec.QueuedAt = a.Now().UTC().Format("2006-01-02T15:04:05.000000000Z07:00")
	}

	if err := a.fail(FPStartAfterSandbox); err != nil {
		return nil, withCleanup(err, cleanup())
	}
	// A walled headless agent's own wall says whether it comes up: no
	// trial run (startSupervisor).
	report := a.wallReports(rec, queued)
	if err := a.tryWall(ctx, rec, !report); err != nil {
		return nil, withCleanup(err, cleanup())
	}
	if rec.Isolation != isolation {
		// No wall here after all (agency.isolate auto): the runner runs
		// as it does unwalled.
		if rec.Command, err = command(rec.Isolation); err != nil {
			return nil, withCleanup(err, cleanup())
		}
	}

	if queued {
		// The supervisor that dequeues it runs with this environment, not
		// its own (QueuedEnvFile).
		if err := a.Store.WriteQueuedEnv(inv, os.Environ()); err != nil {
			return nil, withCleanup(err, cleanup())
		}
	}

	if opts.Prompt != "" {
		if err := store.WriteFileAtomic(filepath.Join(a.Store.InvocationDir(inv), "prompt.md"), []byte(opts.Prompt), 0o600); err != nil {
			return nil, withCleanup(err, cleanup())
		}
	}

	if err := a.Store.WriteNewInvocationThen(rec, func() error { return a.fail(FPStartRecordSync) }); err != nil {
		return nil, withCleanup(err, cleanup())
	}

	// last_used_at: agent start touches its worktree.
	// Not worth failing the start for, but said.
	if cur, err := a.Store.ReadWorktree(wt.WorktreeID); err == nil {
		cur.LastUsedAt = a.now()
		if err := a.Store.WriteWorktree(cur); err != nil {
			a.warn(inv, err)
		}
	}

	created := map[string]any{"worktree_id": wt.WorktreeID, "runner": spec.Name, "mode": mode, "base_commit": base}
	if queued {
		a.event(inv, "created", created)
		a.event(inv, "queued", map[string]any{"max_active": maxActive})
		return rec, nil
	}

	if err := a.startSupervisor(ctx, rec, report, command); err != nil {
		return nil, withCleanup(err, cleanup())
	}

	a.event(inv, "created", created)
	return rec, nil
}

// withHooks gives a headed claude run its hooks, which report its state to
// the supervisor (hook.jsonl); argv is returned with them. Not headless:
// with -p only SessionStart, UserPromptSubmit and SessionEnd fire, which the
// stream already tells.
func (a *App) withHooks(spec runner.Spec, headless bool, inv string, argv []string) ([]string, error) {
	if spec.Hooks != "claude" || headless {
		return argv, nil
	}

	settings := filepath.Join(a.Store.InvocationDir(inv), runner.ClaudeSettingsFile)
	exe := runner.AgencyExe()
	if exe == "" {
		return nil, errs.AgencyMissing(runner.AgencyProgram)
	}

	out, err := runner.WriteClaudeSettings(argv, settings, exe, inv, runner.HookPath(a.Store, inv))
	if err != nil {
		return nil, errs.IO("write", settings, err)
	}

	return out, nil
}

// spawnSupervisor starts `<self> supervise <inv>` in its own session, stdin
// from /dev/null, output to supervisor.log. The caller holds the lock; the
// supervisor's first record update waits for it, and the git call below
// is bounded by lockedCallTimeout so the lock is never held without end.
// With report, it then waits for the supervisor's word on its agent's
// wall (awaitWallReport): a wall that failed is E_WALL_FAILED, its
// supervisor ended.
func (a *App) spawnSupervisor(ctx context.Context, rec *store.InvocationRecord, report bool) error {
	if err := a.fail(FPStartSpawn); err != nil {
		return err
	}

	// Interrupted on the way here: no agent starts (the caller removes
	// what was made).
	if ctx.Err() != nil {
		return errs.Interrupted("starting the agent")
	}

	dir, err := a.supervisorDir(ctx)
	if err != nil {
		return err
	}

	env, err := a.supervisorEnv(rec)
	if err != nil {
		return err
	}

	heard, told, err := wallReportPipe(report)
	if err != nil {
		return err
	}
	defer heard.Close()

	sup, err := runner.SpawnSupervisor(rec.InvocationID, dir, a.Store.SupervisorLogPath(rec.InvocationID), env, told)
	told.Close()
	if err != nil {
		return err
	}

	pid := sup.Pid()
	rec.SupervisorPID = &pid
	rec.SupervisorStartTime = runner.StartTimeOf(pid)
	if err := a.Store.WriteInvocation(rec); err != nil {
		sup.Abort()
		return err
	}

	if err := a.failAfterSpawn(report, sup); err != nil {
		return err
	}
	if msg, failed := awaitWallReport(ctx, heard); failed {
		sup.Abort()
		return errs.WallFailed(msg)
	}

	sup.Release()
	return nil
}

// supervisorDir is where a supervisor runs: the main worktree, since the
// tree we were started in may be an integration tree the user removes
// while the agent runs. The caller holds the lock, so the git calls are
// bounded (lockedCallTimeout). The supervisor finds the repository from
// there: a directory that is not a worktree of this repository would doom
// the run before it starts, so it is refused here, while the command can
// still fail.
func (a *App) supervisorDir(ctx context.Context) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, lockedCallTimeout)
	defer cancel()
	dir := a.mainWorktree(ctx)
	if dir == "" {
		dir = a.Repo.Toplevel
	}

	loc, ok, err := a.Repo.Locate(ctx, dir)
	if err != nil {
		return "", gitErr(err)
	}
	if !ok || loc.CommonDir != a.Repo.CommonDir {
		return "", errs.Internal("the supervisor's directory %s is not a worktree of the repository %s", dir, a.Repo.CommonDir)
	}

	return dir, nil
}

// full tells whether maxActive (if set) agents run already, once the
// queue had its turn (whoever waits goes first); n is how many run. The
// caller holds the lock.
func (a *App) full(ctx context.Context, maxActive int) (bool, int, error) {
	if maxActive <= 0 {
		return false, 0, nil
	}

	a.drainQueueLocked(ctx)
	n, err := a.countActive(ctx)
	if err != nil {
		return false, 0, err
	}

	return n >= maxActive, n, nil
}

// countActive counts starting and running invocations (after reconcile).
func (a *App) countActive(ctx context.Context) (int, error) {
	list, err := a.Store.ScanInvocations()
	if err != nil {
		return 0, errs.IO("scan", a.Store.InvocationsDir(), err)
	}

	n := 0
	for _, e := range list {
		// An agent on a host takes a slot there, not here.
		if e.Record == nil || !e.Record.Active() || e.Record.Host != "" {
			continue
		}

		r := a.reconcileLocked(ctx, e.Record)
		if r.Active() {
			n++
		}
	}

	return n, nil
}
