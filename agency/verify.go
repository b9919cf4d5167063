package agency

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/git-agency/git-agency/errs"
	"github.com/git-agency/git-agency/runner"
	"github.com/git-agency/git-agency/store"
	"github.com/git-agency/git-agency/wall"
)

// Settings of verified landing.
const (
	VerifyKey          = "agency.verify"
	VerifyTimeoutKey   = "agency.verify.timeout"
	VerifySendBackKey  = "agency.verify.sendBack"
	VerifyMaxRoundsKey = "agency.verify.maxRounds"
	AutoLandKey        = "agency.autoLand"
)

// DefaultVerifyTimeout bounds a verify (setup and check) unless
// agency.verify.timeout says otherwise.
const DefaultVerifyTimeout = 30 * time.Minute

// DefaultVerifyMaxRounds bounds how many red verifies of one invocation are
// sent back to its agent.
const DefaultVerifyMaxRounds = 3

// verifyRebuilds bounds how many times a land builds and verifies its
// candidate again because the integration branch moved during a verify.
const verifyRebuilds = 3

// Failpoints of a verified land.
const (
	FPVerifyTreeMade = "verify:tree-made" // verify tree made, record not yet running
	FPVerifyRunning  = "verify:running"   // record says running, check not started
	FPVerifyPassed   = "verify:passed"    // check passed, outcome not recorded
)

// VerifyCommand is the check for wt's lands: agency.worktree.<name>.verify,
// else agency.verify; "" when none is set.
func (a *App) VerifyCommand(wt *store.WorktreeRecord) string {
	if wt != nil && wt.Name != "" {
		if v, ok := a.Config.Get("agency.worktree." + wt.Name + ".verify"); ok {
			return v
		}
	}
	v, _ := a.Config.Get(VerifyKey)
	return v
}

// VerifyTimeout is agency.verify.timeout (default 30m; 0 means the
// default too).
func (a *App) VerifyTimeout() (time.Duration, error) {
	d, ok := a.Config.Duration(VerifyTimeoutKey, DefaultVerifyTimeout)
	if !ok {
		v, _ := a.Config.Get(VerifyTimeoutKey)
		return 0, errs.VerifyTimeoutConfig(v)
	}
	if d <= 0 {
		d = DefaultVerifyTimeout
	}
	return d, nil
}

// verifyMaxRounds is agency.verify.maxRounds (default 3).
func (a *App) verifyMaxRounds() int {
	n, ok := a.Config.Int(VerifyMaxRoundsKey, DefaultVerifyMaxRounds)
	if !ok || n < 0 {
		return DefaultVerifyMaxRounds
	}
	return n
}

// makeVerifyTree makes inv's throwaway verify tree at commit, ready like a
// sandbox of wt: its sparse patterns and the ignored files its
// .worktreeinclude lists. An earlier verify tree of inv (a failed one kept
// for inspection, or one a crash left) goes first. The caller holds the
// repo lock. On failure nothing of it is left.
func (a *App) makeVerifyTree(ctx context.Context, wt *store.WorktreeRecord, inv, commit string) (string, error) {
	if err := a.removeVerifyTree(ctx, inv); err != nil {
		return "", err
	}
	include, err := a.sandboxIncludes(ctx, wt)
	if err != nil {
		return "", err
	}
	dir, tree := a.Store.VerifyDir(inv), a.Store.VerifyTreePath(inv)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", errs.IO("create", dir, err)
	}
	fail := func(err error) (string, error) {
		return "", withCleanup(err, a.removeVerifyTree(ctx, inv))
	}
	if _, err := a.addTree(ctx, wt.TreePath, tree, "", commit, false); err != nil {
		return fail(err)
	}
	if len(include.Patterns) > 0 {
		logPath := filepath.Join(dir, "include.log")
		log, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
		if err != nil {
			return fail(errs.IO("create", logPath, err))
		}
		_, err = a.includeIntoTree(ctx, include, wt.TreePath, tree, log)
		log.Close()
		if err != nil {
			return fail(err)
		}
	}
	if err := a.fail(FPVerifyTreeMade); err != nil {
		return fail(err)
	}
	return tree, nil
}

// removeVerifyTree removes inv's verify directory: the tree, its git
// registration, the include log. It refuses any path outside the data
// directory's verify trees.
func (a *App) removeVerifyTree(ctx context.Context, inv string) error {
	dir, tree := a.Store.VerifyDir(inv), a.Store.VerifyTreePath(inv)
	if err := store.CheckInside(a.Store.VerifiesDir(), dir); err != nil {
		return err
	}
	if _, err := os.Lstat(dir); os.IsNotExist(err) {
		return nil
	}
	ctx, cancel := cleanupCtx(ctx)
	defer cancel()
	if _, err := os.Stat(tree); err == nil {
		_ = a.Repo.WorktreeRemove(ctx, tree, true)
	}
	if err := store.RemoveAllInside(a.Store.VerifiesDir(), dir); err != nil {
		return err
	}
	return a.pruneOurs(ctx)
}

// verifySetup is what runs in a verify tree before the check, as in a new
// sandbox: agency.setup, or the project's setup when its content was
// approved ("" for none).
func (a *App) verifySetup(ctx context.Context, tree string) string {
	plan, err := a.ResolveSetup(ctx, tree)
	if err != nil || plan == nil || !plan.Approved {
		return ""
	}
	return plan.Script
}

// runVerify runs the check in inv's verify tree, without the repo lock,
// logging to the invocation's verify.log: inside the wall (agency.isolate)
// when bubblewrap can make one, as the agents run.
func (a *App) runVerify(ctx context.Context, rec *store.InvocationRecord, tree, command string, timeout time.Duration) runner.VerifyOutcome {
	spec := runner.VerifySpec{Dir: tree, Setup: a.verifySetup(ctx, tree), Command: command, Timeout: timeout,
		LogPath: a.Store.VerifyLogPath(rec.InvocationID),
		Env: append([]string{"AGENCY_INVOCATION_ID=" + rec.InvocationID, "AGENCY_WORKTREE_ID=" + rec.IntegrationWorktreeID,
			"AGENCY_VERIFY_TREE=" + tree, "AGENCY_SANDBOX=" + rec.SandboxPath},
			runner.SetupEnv(a.mainWorktree(ctx), tree)...),
	}
	var err error
	if spec.Argv, err = a.verifyWall(ctx, rec, tree); err != nil {
		msg := "the wall could not be made: " + errs.As(err).Msg
		// The outcome carries msg; the log only repeats it for `verify`'s
		// readers, and has nowhere else to say it could not.
		_ = os.WriteFile(spec.LogPath, []byte(msg+"\n"), 0o600)
		return runner.VerifyOutcome{Error: msg}
	}
	return runner.RunVerify(ctx, spec)
}

// verifyWall is how the check's command line runs in the verify tree:
// inside the wall of the invocation, with the verify tree as its sandbox
// (writable, with its git directory and the object store; no branch) when
// agency.isolate walls agents in; nil (as it is) otherwise.
func (a *App) verifyWall(ctx context.Context, rec *store.InvocationRecord, tree string) (func(argv []string, dir string) ([]string, error), error) {
	iso, err := a.isolation(ctx)
	if err != nil || iso != wall.IsolateBwrap {
		return nil, err
	}
	ws, err := wall.SettingsFromConfig(a.Config)
	if err != nil {
		return nil, err
	}
	r := *rec
	r.SandboxPath, r.SandboxBranch = tree, ""
	w, err := wall.For(a.Store, a.Repo.CommonDir, ws, &r, runner.SelfExe())
	if err != nil {
		return nil, err
	}
	return func(argv []string, _ string) ([]string, error) { return w.Command(argv), nil }, nil
}

// verifyLive reports whether rec's running verify is being run by a live
// process other than this one.
func verifyLive(rec *store.InvocationRecord) bool {
	if rec.VerifyStatus != store.VerifyRunning || rec.VerifyPID == nil {
		return false
	}
	return *rec.VerifyPID != os.Getpid() && runner.AlivePtr(rec.VerifyPID, rec.VerifyPIDStartTime)
}

// VerifyStatusOf is rec's verify status as read paths show it: none when
// never verified, and none for a running verify whose land process is gone
// (a crash: the next land verifies again).
func VerifyStatusOf(rec *store.InvocationRecord) string {
	switch {
	case rec == nil || rec.VerifyStatus == "":
		return store.VerifyNone
	case rec.VerifyStatus == store.VerifyRunning && !runner.AlivePtr(rec.VerifyPID, rec.VerifyPIDStartTime):
		return store.VerifyNone
	}
	return rec.VerifyStatus
}

// AnyVerify reports whether a check is set: agency.verify, or any
// worktree's own.
func (a *App) AnyVerify() bool {
	if v, _ := a.Config.Get(VerifyKey); v != "" {
		return true
	}
	for _, name := range a.Config.Subsections("agency.worktree") {
		if v, _ := a.Config.Get("agency.worktree." + name + ".verify"); v != "" {
			return true
		}
	}
	return false
}

// VerifyLogText is the end of rec's latest verify log, at most max bytes
// ("" when it was never verified).
func (a *App) VerifyLogText(rec *store.InvocationRecord, max int64) string {
	path := rec.VerifyLog
	if path == "" {
		path = a.Store.VerifyLogPath(rec.InvocationID)
	}
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Size() > max {
		if _, err := f.Seek(fi.Size()-max, 0); err != nil {
			return ""
		}
	}
	b, _ := io.ReadAll(f)
	return string(b)
}
