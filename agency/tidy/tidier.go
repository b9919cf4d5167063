// Package tidy is what keeps a repository clean and says what is wrong with
// it: gc (its plan and its removals), doctor (its checks and findings) and
// the leftovers both find (temp files and record directories of killed
// writers, orphan branches, verify trees).
//
// agency.App is its only caller: it builds a Tidier for each call, with the
// App's core and a Host that answers what tidying asks of the rest of
// agency: the checks and leftovers that stay with their use case (the
// wall, configuration, setups, env copies, queue, retire, adopt), settling
// and viewing invocations, and removing trees. This package never imports
// agency.
package tidy

import (
	"context"

	"github.com/git-agency/git-agency/agency/internal/core"
	"github.com/git-agency/git-agency/errs"
	"github.com/git-agency/git-agency/store"
)

// Tidier tidies one repository: one command's core and the rest of agency
// it asks.
type Tidier struct {
	core.Core
	Host Host
}

// AddFinding adds one finding (Doctor's steps, and the checks agency keeps,
// share it).
type AddFinding = func(check, level, hint, path, format string, args ...any)

// addFinding is AddFinding inside this package.
type addFinding = AddFinding

// Host is what tidying asks of the rest of agency (agency.App answers).
type Host interface {
	// CheckWall, CheckConfig, CheckSetups, CheckCopiedEnvs and CheckRelink
	// are doctor's checks that live with their use case.
	CheckWall(ctx context.Context, add AddFinding)
	CheckConfig(add AddFinding)
	CheckSetups(ctx context.Context, add AddFinding, wts []store.WorktreeEntry)
	CheckCopiedEnvs(add AddFinding, wts []store.WorktreeEntry, records map[string]*store.InvocationRecord)
	CheckRelink(add AddFinding)
	// CheckHostStarts reports starts on hosts killed before their record
	// was written here.
	CheckHostStarts(add AddFinding)
	// TreeMoved says an integration worktree's tree is not where its
	// record says, or nil.
	TreeMoved(ctx context.Context, wt *store.WorktreeRecord) *errs.Error
	// CheckOnBranch refuses a worktree whose tree is off its branch.
	CheckOnBranch(ctx context.Context, wt *store.WorktreeRecord) error
	// View is the outcome of a dead supervisor, in memory only.
	View(ctx context.Context, r *store.InvocationRecord) *store.InvocationRecord
	// Settle records the outcome of every dead supervisor.
	Settle(ctx context.Context)
	// RemoveTreeAt removes a tree under root and its registration.
	RemoveTreeAt(ctx context.Context, root, tree string) error
	// RemoveVerifyTree removes an invocation's verify tree.
	RemoveVerifyTree(ctx context.Context, inv string) error
	// RetiredLeftovers and QueuedEnvLeftovers are leftovers of retire and
	// the queue; RemoveRetiredLeftover and RemoveQueuedEnvLeftover remove
	// one, checked again.
	RetiredLeftovers() []Leftover
	QueuedEnvLeftovers() []Leftover
	RemoveRetiredLeftover(it *GCItem) error
	RemoveQueuedEnvLeftover(it *GCItem) error
	// Describe is one line saying what an operation did.
	Describe(e store.Operation) string
	// UndoAdoptMarks removes what an adopt wrote into the user's tree.
	UndoAdoptMarks(m store.AdoptMarks) error
}
