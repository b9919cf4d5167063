package land

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/git-agency/git-agency/agency/internal/core"
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
func (a *Lander) VerifyCommand(wt *store.WorktreeRecord) string {
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
func (a *Lander) VerifyTimeout() (time.Duration, error) {
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
func (a *Lander) verifyMaxRounds() int {
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
func (a *Lander) makeVerifyTree(ctx context.Context, wt *store.WorktreeRecord, inv, commit string) (string, error) {
	if err := a.RemoveVerifyTree(ctx, inv); err != nil {
		return "", err
	}
	include, err := a.Host.SandboxIncludes(ctx, wt)
	if err != nil {
		return "", err
	}
	dir, tree := a.Store.VerifyDir(inv), a.Store.VerifyTreePath(inv)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", errs.IO("create", dir, err)
	}
	fail := func(err error) (string, error) {
		return "", core.WithCleanup(err, a.RemoveVerifyTree(ctx, inv))
	}
	if _, err := a.Host.AddTree(ctx, wt.TreePath, tree, "", commit, false); err != nil {
		return fail(err)
	}
	if len(include.Patterns) > 0 {
		logPath := filepath.Join(dir, "include.log")
		log, err := store.OpenLog(logPath, os.O_TRUNC)
		if err != nil {
			return fail(errs.IO("create", logPath, err))
		}
		_, err = a.Host.IncludeIntoTree(ctx, include, wt.TreePath, tree, log)
		log.Close()
		if err != nil {
			return fail(err)
		}
	}
	if err := a.Fail(FPVerifyTreeMade); err != nil {
		return fail(err)
	}
	return tree, nil
}

// RemoveVerifyTree removes inv's verify directory: the tree, its git
// registration, the include log. It refuses any path outside the data
// directory's verify trees.
func (a *Lander) RemoveVerifyTree(ctx context.Context, inv string) error {
	dir, tree := a.Store.VerifyDir(inv), a.Store.VerifyTreePath(inv)
	if err := store.CheckInside(a.Store.VerifiesDir(), dir); err != nil {
		return err
	}
	if _, err := os.Lstat(dir); os.IsNotExist(err) {
		return nil
	}
	ctx, cancel := core.CleanupCtx(ctx)
	defer cancel()
	if _, err := os.Stat(tree); err == nil {
		_ = a.Repo.WorktreeRemove(ctx, tree, true)
	}
	if err := store.RemoveAllInside(a.Store.VerifiesDir(), dir); err != nil {
		return err
	}
	return a.Host.PruneOurs(ctx)
}

// verifyKey is what a pass of a candidate is reused by: its tree, the
// integration tip it was built on, the check, the setup (agency.setup; a
// project's setup files are in the tree) and the include patterns. A
// change to any of them makes the next land run the check again.
func (a *Lander) verifyKey(wt *store.WorktreeRecord, include core.IncludeSpec, treeID, onto, command string) string {
	setup, _ := a.Config.Get(core.SetupConfigKey)
	h := sha256.New()
	for _, part := range []string{treeID, onto, command, setup, strings.Join(include.Patterns, "\n")} {
		fmt.Fprintf(h, "%d:%s\n", len(part), part)
	}
	return hex.EncodeToString(h.Sum(nil))[:24]
}

// runVerify runs the check in inv's verify tree, without the repo lock,
// logging to the invocation's verify.log: inside the wall (agency.isolate)
// when bubblewrap can make one, as the agents run.
func (a *Lander) runVerify(ctx context.Context, rec *store.InvocationRecord, tree, command string, timeout time.Duration) runner.VerifyOutcome {
	spec := runner.VerifySpec{Dir: tree, Setup: a.Host.VerifySetup(ctx, tree), Command: command, Timeout: timeout,
		LogPath: a.Store.VerifyLogPath(rec.InvocationID),
		Env: append([]string{"AGENCY_INVOCATION_ID=" + rec.InvocationID, "AGENCY_WORKTREE_ID=" + rec.IntegrationWorktreeID,
			"AGENCY_VERIFY_TREE=" + tree, "AGENCY_SANDBOX=" + rec.SandboxPath},
			runner.SetupEnv(a.Host.MainWorktree(ctx), tree)...),
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
func (a *Lander) verifyWall(ctx context.Context, rec *store.InvocationRecord, tree string) (func(argv []string, dir string) ([]string, error), error) {
	iso, err := a.Host.Isolation(ctx)
	if err != nil || iso != wall.IsolateBwrap {
		return nil, err
	}
	ws, err := wall.SettingsFromConfig(a.Config)
	if err != nil {
		return nil, err
	}
	r := *rec
	r.SandboxPath, r.SandboxBranch = tree, ""
	w, err := wall.For(a.Store, a.Repo.CommonDir, ws, &r, core.AgencyExe())
	if err == nil {
		err = wall.Prepare(ctx, a.Store, a.Repo, w, rec.InvocationID)
	}
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
func (a *Lander) AnyVerify() bool {
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
func (a *Lander) VerifyLogText(rec *store.InvocationRecord, max int64) string {
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
