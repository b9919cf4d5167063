package agency

import (
	"context"

	"github.com/git-agency/git-agency/errs"
	"github.com/git-agency/git-agency/store"
)

// Whether a tree has uncommitted changes to tracked files takes a pass
// over every file (a `git status`): at 100k files about as long as a tenth
// of the checkout of a new tree, which never reads that tree. So the check
// runs beside the checkout instead of before it (trackedCheck): a create
// that finds changes stops the checkout and takes back what it made, and
// one that does not has paid for the check only in the time both took.

// trackedCheck is Tree.HasTrackedChanges of one tree, running in the
// background.
type trackedCheck struct {
	done   chan struct{}
	found  chan struct{} // closed once changes (or an error) are known
	dirty  bool
	err    error
	cancel context.CancelFunc
}

// checkTrackedChanges starts the check of tree.
func (a *App) checkTrackedChanges(ctx context.Context, tree string) *trackedCheck {
	ctx, cancel := context.WithCancel(ctx)
	c := &trackedCheck{done: make(chan struct{}), found: make(chan struct{}), cancel: cancel}
	go func() {
		defer close(c.done)
		c.dirty, c.err = a.Repo.Tree(tree).HasTrackedChanges(ctx)
		if c.dirty || c.err != nil {
			close(c.found)
		}
	}()
	return c
}

// wait returns the check's answer once it has one.
func (c *trackedCheck) wait() (bool, error) {
	<-c.done
	return c.dirty, c.err
}

// stop ends the check (its git process too) and waits for it.
func (c *trackedCheck) stop() {
	c.cancel()
	<-c.done
}

// stopOnFound returns ctx, cancelled as soon as c finds changes, and the
// function that releases it.
func (c *trackedCheck) stopOnFound(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	go func() {
		select {
		case <-c.found:
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, cancel
}

// dirtyParentFirst is err unless the check of the tree a worktree is
// created from (tree) finds changes or fails: that refusal comes first, as
// it would have had the check run before anything else.
func (a *App) dirtyParentFirst(ctx context.Context, c *trackedCheck, tree string, err error) error {
	dirty, cerr := c.wait()
	if cerr != nil {
		return gitErr(cerr)
	}
	if dirty {
		return a.dirtyErr(ctx, tree, errs.DirtyParent(tree))
	}

	return err
}

// UnseenEdits is the background check behind `agent start`'s warning that
// the integration worktree has uncommitted changes its agent will not see:
// started before the sandbox is made, read (Wait) once it is.
type UnseenEdits struct{ check *trackedCheck }

// CheckUnseenEdits starts the check of wt's tree.
func (a *App) CheckUnseenEdits(ctx context.Context, wt *store.WorktreeRecord) *UnseenEdits {
	return &UnseenEdits{check: a.checkTrackedChanges(ctx, wt.TreePath)}
}

// Wait tells whether the tree had uncommitted changes to tracked files (a
// failed check says no, as IntegrationDirty does).
func (u *UnseenEdits) Wait() bool {
	dirty, err := u.check.wait()
	return err == nil && dirty
}

// Stop ends the check without its answer.
func (u *UnseenEdits) Stop() { u.check.stop() }
