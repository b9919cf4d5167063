package agency

import (
	"context"
	"sort"
	"time"

	"github.com/git-agency/git-agency/agency/internal/core"
	"github.com/git-agency/git-agency/agency/tidy"
	"github.com/git-agency/git-agency/errs"
	"github.com/git-agency/git-agency/store"
)

// Tidying (gc, doctor, leftovers) lives in package tidy; these are its
// names as agency's callers (cli, watch) and its producers of leftovers
// (queue, retire, env copies, setups, the wall) know them.
type (
	// GCOptions are the inputs of `gc`.
	GCOptions = tidy.GCOptions
	// GCStep is one step of gc's progress.
	GCStep = tidy.GCStep
	// GCItem is one thing gc removes, or keeps and says why.
	GCItem = tidy.GCItem
	// GCResult is gc's report.
	GCResult = tidy.GCResult
	// Finding is one result of `doctor`.
	Finding = tidy.Finding
	// Leftover is what a killed process left behind.
	Leftover = tidy.Leftover
	// addFinding adds one finding (doctor's checks agency keeps).
	addFinding = tidy.AddFinding
)

// gc phases and item kinds, finding levels and settings of tidying
// (package tidy).
const (
	GCDecided = tidy.GCDecided
	GCDone    = tidy.GCDone

	GCSandboxTree   = tidy.GCSandboxTree
	GCOrphanDir     = tidy.GCOrphanDir
	GCRegistration  = tidy.GCRegistration
	GCTmuxSession   = tidy.GCTmuxSession
	GCBranch        = tidy.GCBranch
	GCSnapshotRef   = tidy.GCSnapshotRef
	GCKeptRef       = tidy.GCKeptRef
	GCTempFile      = tidy.GCTempFile
	GCInvocationDir = tidy.GCInvocationDir
	GCWorktreeDir   = tidy.GCWorktreeDir
	GCUndoRef       = tidy.GCUndoRef
	GCQueuedEnv     = tidy.GCQueuedEnv
	GCRetiredTree   = tidy.GCRetiredTree
	GCVerifyTree    = tidy.GCVerifyTree

	LevelOK      = tidy.LevelOK
	LevelWarn    = tidy.LevelWarn
	LevelProblem = tidy.LevelProblem

	MinGitVersion = tidy.MinGitVersion
	StaleTempAge  = tidy.StaleTempAge

	// tmuxWait bounds each tmux call (core.TmuxWait).
	tmuxWait = core.TmuxWait
)

// tidier is tidying for one call: a's core as it is now and a as its host.
func (a *App) tidier() *tidy.Tidier {
	return &tidy.Tidier{Core: a.core(), Host: tidyHost{a}}
}

// Doctor checks the environment and this repository's records
// (tidy.Tidier.Doctor).
func (a *App) Doctor(ctx context.Context) []Finding { return a.tidier().Doctor(ctx) }

// GCPlan is what gc would do (tidy.Tidier.GCPlan).
func (a *App) GCPlan(ctx context.Context, opts GCOptions) (*GCResult, error) {
	return a.tidier().GCPlan(ctx, opts)
}

// GC carries out a plan (tidy.Tidier.GC).
func (a *App) GC(ctx context.Context, plan *GCResult, progress func(GCStep)) *GCResult {
	return a.tidier().GC(ctx, plan, progress)
}

// ParseAge parses a --older-than value (tidy.ParseAge).
func ParseAge(s string) (time.Duration, error) { return tidy.ParseAge(s) }

// pruneOurs is core.Core.PruneOurs.
func (a *App) pruneOurs(ctx context.Context, also ...string) error {
	c := a.core()
	return c.PruneOurs(ctx, also...)
}

// localOnlySubmodules is core.Core.LocalOnlySubmodules.
func (a *App) localOnlySubmodules(ctx context.Context, tree string) []string {
	c := a.core()
	return c.LocalOnlySubmodules(ctx, tree)
}

// tidyHost is what tidying asks of the rest of agency (tidy.Host).
type tidyHost struct{ a *App }

func (h tidyHost) CheckWall(ctx context.Context, add addFinding) { h.a.checkWall(ctx, add) }

func (h tidyHost) CheckConfig(add addFinding) { h.a.checkConfig(add) }

func (h tidyHost) CheckSetups(ctx context.Context, add addFinding, wts []store.WorktreeEntry) {
	h.a.checkSetups(ctx, add, wts)
}

func (h tidyHost) CheckCopiedEnvs(add addFinding, wts []store.WorktreeEntry, records map[string]*store.InvocationRecord) {
	h.a.checkCopiedEnvs(add, wts, records)
}

func (h tidyHost) CheckRelink(add addFinding) { h.a.checkRelink(add) }

func (h tidyHost) CheckHostStarts(add addFinding) {
	starts := h.a.InterruptedHostStarts()
	names := make([]string, 0, len(starts))
	for name := range starts {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		msg, hint := errs.HostStartsInterrupted(name, len(starts[name]))
		add("host_starts", LevelProblem, hint, h.a.hostStartsDir(name), "%s", msg)
	}
}

func (h tidyHost) TreeMoved(ctx context.Context, wt *store.WorktreeRecord) *errs.Error {
	return h.a.treeMoved(ctx, wt)
}

func (h tidyHost) CheckOnBranch(ctx context.Context, wt *store.WorktreeRecord) error {
	return h.a.CheckOnBranch(ctx, wt)
}

func (h tidyHost) View(ctx context.Context, r *store.InvocationRecord) *store.InvocationRecord {
	return h.a.View(ctx, r)
}

func (h tidyHost) Settle(ctx context.Context) { h.a.Settle(ctx) }

func (h tidyHost) RemoveTreeAt(ctx context.Context, root, tree string) error {
	return h.a.removeTreeAt(ctx, root, tree)
}

func (h tidyHost) RemoveVerifyTree(ctx context.Context, inv string) error {
	return h.a.removeVerifyTree(ctx, inv)
}

func (h tidyHost) RetiredLeftovers() []Leftover { return h.a.retiredLeftovers() }

func (h tidyHost) QueuedEnvLeftovers() []Leftover { return h.a.queuedEnvLeftovers() }

func (h tidyHost) RemoveRetiredLeftover(it *GCItem) error { return h.a.removeRetiredLeftover(it) }

func (h tidyHost) RemoveQueuedEnvLeftover(it *GCItem) error {
	return h.a.removeQueuedEnvLeftover(it)
}

func (h tidyHost) Describe(e store.Operation) string { return Describe(e) }

func (h tidyHost) UndoAdoptMarks(m store.AdoptMarks) error { return undoAdoptMarks(m) }

// checkRelink reports a relink this command made (or could not make).
func (a *App) checkRelink(add addFinding) {
	r := a.Relinked
	if r == nil {
		return
	}

	if r.Err != nil {
		add("repository", LevelProblem, "fix the cause, then run 'git agency doctor' again: it retries the relink", a.Repo.CommonDir,
			"this repository moved from %s, and relinking its records failed: %v", r.From, r.Err)
		return
	}

	add("repository", LevelWarn, "", a.Repo.CommonDir,
		"this repository moved from %s: its records were relinked and %d worktree(s) repaired", r.From, len(r.Repaired))
}
