package agency

import (
	"context"
	"github.com/git-agency/git-agency/runner"
	"io"
	"time"

	"github.com/git-agency/git-agency/agency/internal/core"
	"github.com/git-agency/git-agency/agency/land"
	"github.com/git-agency/git-agency/checkpoint"
	"github.com/git-agency/git-agency/errs"
	"github.com/git-agency/git-agency/gitcore"
	"github.com/git-agency/git-agency/store"
)

// Landing lives in package land; these are its names as agency's callers
// (cli, watch) know them.
type (
	// LandOptions are the inputs of `agent land`.
	LandOptions = land.Options
	// LandResult is what a land (or land --check) did or would do.
	LandResult = land.Result
	// LandOutcome is one invocation's outcome of a land of several.
	LandOutcome = land.Outcome
	// Astray is the commits a sandbox's HEAD holds that its branch does not.
	Astray = land.Astray
)

// Land progress states, failpoints, notifications, outcomes, display
// statuses and settings of landing (package land).
const (
	LandInProgress  = land.LandInProgress
	LandDone        = land.LandDone
	LandInterrupted = land.LandInterrupted

	FPLandBeforeUpdate = land.FPLandBeforeUpdate
	FPLandAfterUpdate  = land.FPLandAfterUpdate
	FPLandAfterRemove  = land.FPLandAfterRemove
	FPVerifyTreeMade   = land.FPVerifyTreeMade
	FPVerifyRunning    = land.FPVerifyRunning
	FPVerifyPassed     = land.FPVerifyPassed

	NotifyLanded       = land.NotifyLanded
	NotifyVerifyFailed = land.NotifyVerifyFailed

	OutcomeLanded          = land.OutcomeLanded
	OutcomeVerifyFailed    = land.OutcomeVerifyFailed
	OutcomeVerifyCancelled = land.OutcomeVerifyCancelled
	OutcomeVerifyError     = land.OutcomeVerifyError
	OutcomeConflict        = land.OutcomeConflict
	OutcomeRefused         = land.OutcomeRefused

	DisplayNothingToLand  = land.DisplayNothingToLand
	DisplayNeedsApply     = land.DisplayNeedsApply
	DisplaySandboxMissing = land.DisplaySandboxMissing
	DisplayOffBranch      = land.DisplayOffBranch

	VerifyKey              = land.VerifyKey
	VerifyTimeoutKey       = land.VerifyTimeoutKey
	VerifySendBackKey      = land.VerifySendBackKey
	VerifyMaxRoundsKey     = land.VerifyMaxRoundsKey
	AutoLandKey            = land.AutoLandKey
	VerifySkipped          = land.VerifySkipped
	DefaultVerifyTimeout   = land.DefaultVerifyTimeout
	DefaultVerifyMaxRounds = land.DefaultVerifyMaxRounds
)

// lander is landing for one call: a's core as it is now (tests set Now,
// Warn and Failpoint after Open), a as its host, a's waiting notes.
func (a *App) lander() *land.Lander {
	return &land.Lander{Core: a.core(), Host: landHost{a}, Notes: &a.notes}
}

// Land is `agent land` (land.Lander.Land).
func (a *App) Land(ctx context.Context, opts LandOptions) (*LandResult, error) {
	return a.lander().Land(ctx, opts)
}

// CheckLand is `land --check` (land.Lander.CheckLand).
func (a *App) CheckLand(ctx context.Context, opts LandOptions) (*LandResult, error) {
	return a.lander().CheckLand(ctx, opts)
}

// LandMany is `land X Y Z`, `--all` and `--batch` (land.Lander.LandMany).
func (a *App) LandMany(ctx context.Context, ids []string, opts LandOptions) []LandOutcome {
	return a.lander().LandMany(ctx, ids, opts)
}

// ReadyToLand lists what `land --all` takes (land.Lander.ReadyToLand).
func (a *App) ReadyToLand(ctx context.Context, worktree string, apply bool) ([]string, error) {
	return a.lander().ReadyToLand(ctx, worktree, apply)
}

// RecoverLand finishes or records an interrupted land
// (land.Lander.RecoverLand).
func (a *App) RecoverLand(ctx context.Context, rec *store.InvocationRecord) *store.InvocationRecord {
	return a.lander().RecoverLand(ctx, rec)
}

// AfterRun is what follows an agent's exit: agency.autoLand, a red verify
// sent back (land.Lander.AfterRun).
func (a *App) AfterRun(ctx context.Context, inv string) error {
	return a.lander().AfterRun(ctx, inv)
}

// VerifyCommand is the check a land into wt runs (land.Lander.VerifyCommand).
func (a *App) VerifyCommand(wt *store.WorktreeRecord) string { return a.lander().VerifyCommand(wt) }

// VerifyTimeout is agency.verify.timeout (land.Lander.VerifyTimeout).
func (a *App) VerifyTimeout() (time.Duration, error) { return a.lander().VerifyTimeout() }

// AnyVerify reports whether any worktree lands verified
// (land.Lander.AnyVerify).
func (a *App) AnyVerify() bool { return a.lander().AnyVerify() }

// VerifyLogText is the end of an invocation's verify log
// (land.Lander.VerifyLogText).
func (a *App) VerifyLogText(rec *store.InvocationRecord, max int64) string {
	return a.lander().VerifyLogText(rec, max)
}

// IntegrationDirty reports whether an integration worktree's tree has
// tracked changes (land.Lander.IntegrationDirty).
func (a *App) IntegrationDirty(ctx context.Context, worktreeID string) bool {
	return a.lander().IntegrationDirty(ctx, worktreeID)
}

// OutcomeOf is one invocation's outcome of a land (land.OutcomeOf).
func OutcomeOf(inv string, res *LandResult, err error) LandOutcome {
	return land.OutcomeOf(inv, res, err)
}

// VerifyStatusOf is the record's verify status as shown (land.VerifyStatusOf).
func VerifyStatusOf(rec *store.InvocationRecord) string { return land.VerifyStatusOf(rec) }

// sandboxTree returns the invocation's sandbox tree path when it exists.
func (a *App) sandboxTree(rec *store.InvocationRecord) string {
	c := a.core()
	return c.SandboxTree(rec)
}

// snapshotSandbox is land.Lander.SnapshotSandbox.
func (a *App) snapshotSandbox(ctx context.Context, tree string, exclude []string) (*gitcore.Snapshot, error) {
	return a.lander().SnapshotSandbox(ctx, tree, exclude)
}

// sandboxAstray is land.Lander.SandboxAstray.
func (a *App) sandboxAstray(ctx context.Context, rec *store.InvocationRecord, tree, tip string) (*Astray, error) {
	return a.lander().SandboxAstray(ctx, rec, tree, tip)
}

// recoverLandLocked is land.Lander.RecoverLandLocked.
func (a *App) recoverLandLocked(ctx context.Context, rec *store.InvocationRecord) (*store.InvocationRecord, error) {
	return a.lander().RecoverLandLocked(ctx, rec)
}

// removeVerifyTree is land.Lander.RemoveVerifyTree.
func (a *App) removeVerifyTree(ctx context.Context, inv string) error {
	return a.lander().RemoveVerifyTree(ctx, inv)
}

// landHost is what landing asks of the rest of agency (land.Host).
type landHost struct{ a *App }

func (h landHost) VerifyOnHosts(ctx context.Context, inv, commit, command string, timeout time.Duration, first int) (runner.VerifyOutcome, string, bool) {
	return h.a.verifyOnHosts(ctx, inv, commit, command, timeout, first)
}

func (h landHost) VerifyHostCount() int { return len(h.a.verifyHosts()) }

func (h landHost) ResolveInvocation(query string) (*store.InvocationRecord, error) {
	return h.a.ResolveInvocation(query)
}

func (h landHost) ResolveWorktree(query string, all bool) (*store.WorktreeEntry, error) {
	return h.a.ResolveWorktree(query, all)
}

func (h landHost) WorktreeByID(id string) (*store.WorktreeRecord, error) { return h.a.WorktreeByID(id) }

func (h landHost) CheckOnBranch(ctx context.Context, wt *store.WorktreeRecord) error {
	return h.a.CheckOnBranch(ctx, wt)
}

func (h landHost) Reconcile(ctx context.Context, r *store.InvocationRecord) *store.InvocationRecord {
	return h.a.Reconcile(ctx, r)
}

func (h landHost) View(ctx context.Context, r *store.InvocationRecord) *store.InvocationRecord {
	return h.a.View(ctx, r)
}

func (h landHost) SendBack(ctx context.Context, inv, prompt string) error {
	_, err := h.a.Send(ctx, SendOptions{Invocation: inv, Prompt: prompt, PromptSource: "verify"})
	return err
}

// Forecast names the other pending invocations inv conflicts with; the
// integration branch itself is land's own finding.
func (h landHost) Forecast(ctx context.Context, worktreeID, inv string) (bool, []string, bool) {
	f := h.a.WorktreeForecasts(ctx, worktreeID)[inv]
	if f == nil {
		return false, nil, false
	}

	var partners []string
	for _, p := range f.ConflictsWith {
		if p != ConflictsIntegration {
			partners = append(partners, p)
		}
	}

	return f.LandsCleanly, partners, true
}

func (h landHost) CheckRefsLogged(branch, tip string) error { return h.a.checkRefsLogged(branch, tip) }

func (h landHost) DirtyErr(ctx context.Context, tree string, e *errs.Error) *errs.Error {
	return h.a.dirtyErr(ctx, tree, e)
}

func (h landHost) RefuseSubmoduleDirt(ctx context.Context, inv, tree string) error {
	return h.a.refuseSubmoduleDirt(ctx, inv, tree)
}

func (h landHost) CheckpointOptions(rec *store.InvocationRecord, reason string) checkpoint.Options {
	return h.a.checkpointOptions(rec, reason)
}

func (h landHost) SaveSandbox(ctx context.Context, rec *store.InvocationRecord, reason string) (*store.Restore, error) {
	return h.a.saveSandbox(ctx, rec, reason)
}

func (h landHost) RetireSandboxTree(ctx context.Context, rec *store.InvocationRecord) error {
	return h.a.retireSandboxTree(ctx, rec)
}

func (h landHost) SandboxIncludes(ctx context.Context, wt *store.WorktreeRecord) (core.IncludeSpec, error) {
	return h.a.sandboxIncludes(ctx, wt)
}

func (h landHost) IncludeIntoTree(ctx context.Context, spec core.IncludeSpec, source, dst string, log io.Writer) (*store.IncludeStats, error) {
	return h.a.includeIntoTree(ctx, spec, source, dst, log)
}

func (h landHost) AddTree(ctx context.Context, source, path, branch, start string, full bool) (bool, error) {
	return h.a.addTree(ctx, source, path, branch, start, full)
}

func (h landHost) PruneOurs(ctx context.Context, also ...string) error {
	return h.a.pruneOurs(ctx, also...)
}

func (h landHost) MainWorktree(ctx context.Context) string { return h.a.mainWorktree(ctx) }

// VerifySetup is what runs in a verify tree before the check, as in a new
// sandbox: agency.setup, or the project's setup when its content was
// approved ("" for none).
func (h landHost) VerifySetup(ctx context.Context, tree string) string {
	plan, err := h.a.ResolveSetup(ctx, tree)
	if err != nil || plan == nil || !plan.Approved {
		return ""
	}
	return plan.Script
}

func (h landHost) Isolation(ctx context.Context) (string, error) { return h.a.isolation(ctx) }
