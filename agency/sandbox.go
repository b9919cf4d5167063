package agency

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/git-agency/git-agency/errs"
	"github.com/git-agency/git-agency/store"
)

// CreateSandbox creates the sandbox worktree of invocation inv, branched
// from the integration tree's current HEAD, with its logs directory and an
// invisible .agency/. It returns the base commit. On failure nothing is
// left: no tree, registration, branch or sandbox directory. The caller
// holds the repo lock and has checked the tree is on its branch
// (PrepareStart).
func (a *App) CreateSandbox(ctx context.Context, wt *store.WorktreeRecord, inv string) (string, error) {
	res, err := a.createSandboxWith(ctx, wt, inv, SandboxOptions{})
	if err != nil {
		return "", err
	}
	return res.Base, nil
}

// SandboxOptions shape a new sandbox.
type SandboxOptions struct {
	// Full opts out of the integration tree's sparse checkout.
	Full bool
	// Base, when set, is the commit to start from instead of the
	// integration HEAD.
	Base string
}

// SandboxResult is what createSandboxWith made.
type SandboxResult struct {
	Base    string
	Sparse  bool
	Include *store.IncludeStats
}

// createSandboxWith is CreateSandbox with options. The sandbox inherits the
// integration tree's sparse checkout and gets the ignored files its
// .worktreeinclude lists (logged to logs/setup.log); a failing copy removes
// everything made.
func (a *App) createSandboxWith(ctx context.Context, wt *store.WorktreeRecord, inv string, opts SandboxOptions) (*SandboxResult, error) {
	base, err := a.sandboxBase(ctx, wt, opts)
	if err != nil {
		return nil, gitErr(err)
	}
	if base == "" {
		return nil, errs.EmptyIntegrationBranch(wt.Branch)
	}

	include, err := a.sandboxIncludes(ctx, wt)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(a.Store.SandboxesDir(), 0o700); err != nil {
		return nil, errs.IO("create", a.Store.SandboxesDir(), err)
	}

	dir := a.Store.SandboxDir(inv)
	if err := os.Mkdir(dir, 0o700); err != nil {
		return nil, errs.IO("create", dir, err)
	}

	tree := a.Store.SandboxTreePath(inv)
	branch := store.SandboxBranch(inv)
	cleanup := func(added bool) error {
		return a.undoAdd(ctx, added, a.Store.SandboxesDir(), dir, tree, branch)
	}
	sparse, err := a.addTree(ctx, wt.TreePath, tree, branch, base, opts.Full)
	if err != nil {
		return nil, withCleanup(err, cleanup(true))
	}
	if err := a.fail("sandbox-create:after-worktree-add"); err != nil {
		return nil, withCleanup(err, cleanup(true))
	}
	if HasMarker(tree) {
		// The integration branch itself tracks a marker: never a sandbox.
		return nil, withCleanup(errs.MarkerInSandbox(), cleanup(true))
	}
	if err := agencyDirFree(tree, base); err != nil {
		return nil, withCleanup(err, cleanup(true))
	}
	if err := WriteAgencyIgnore(tree); err != nil {
		return nil, withCleanup(err, cleanup(true))
	}
	if err := os.MkdirAll(filepath.Join(tree, store.AgencyDir, "state"), 0o755); err != nil {
		return nil, withCleanup(errs.IO("create", filepath.Join(tree, store.AgencyDir, "state"), err), cleanup(true))
	}
	if err := os.MkdirAll(a.Store.SandboxLogsDir(inv), 0o700); err != nil {
		return nil, withCleanup(errs.IO("create", a.Store.SandboxLogsDir(inv), err), cleanup(true))
	}

	res := &SandboxResult{Base: base, Sparse: sparse}

	// The copy runs under the repo lock, like the rest of the sandbox's
	// making. Releasing the lock for it would publish a sandbox that is not
	// ready: discard, worktree rm --force, gc and reconcile would each need
	// to recognise a record "being prepared" (and leave it to the live
	// start command), or a discard could remove the tree under the copy and
	// the start's cleanup then remove the record the discard wrote. See
	// docs/architecture.md, "Locks".
	if res.Include, err = a.includeIntoSandboxWith(ctx, wt, inv, include); err != nil {
		return nil, withCleanup(err, cleanup(true))
	}

	return res, nil
}

// sandboxBase is the commit a new sandbox starts from: opts.Base, else
// the integration tree's HEAD.
func (a *App) sandboxBase(ctx context.Context, wt *store.WorktreeRecord, opts SandboxOptions) (string, error) {
	if opts.Base != "" {
		return opts.Base, nil
	}
	return a.treeHead(ctx, wt.TreePath)
}

// sandboxIncludes are the include patterns of a new sandbox of wt (an
// uncommitted .worktreeinclude lives in the main worktree only).
func (a *App) sandboxIncludes(ctx context.Context, wt *store.WorktreeRecord) (IncludeSpec, error) {
	trees := []string{wt.TreePath}
	if _, err := os.Lstat(filepath.Join(wt.TreePath, IncludeFile)); err != nil {
		trees = append(trees, a.mainWorktree(ctx))
	}
	return a.includePatterns(trees...)
}

// includeIntoSandbox copies the ignored files wt's include patterns list
// into the sandbox tree of inv (undo recreating a sandbox).
func (a *App) includeIntoSandbox(ctx context.Context, wt *store.WorktreeRecord, inv string) error {
	include, err := a.sandboxIncludes(ctx, wt)
	if err != nil {
		return err
	}
	_, err = a.includeIntoSandboxWith(ctx, wt, inv, include)
	return err
}

// includeIntoSandboxWith copies what the patterns list from wt's tree into
// the sandbox tree of inv, logging to its logs/setup.log.
func (a *App) includeIntoSandboxWith(ctx context.Context, wt *store.WorktreeRecord, inv string, include IncludeSpec) (*store.IncludeStats, error) {
	if len(include.Patterns) == 0 {
		return nil, nil
	}

	logPath := filepath.Join(a.Store.SandboxLogsDir(inv), "setup.log")
	log, err := store.OpenLog(logPath, os.O_APPEND)
	if err != nil {
		return nil, errs.IO("create", logPath, err)
	}
	defer log.Close()
	return a.includeIntoTree(ctx, include, wt.TreePath, a.Store.SandboxTreePath(inv), log)
}

// RemoveSandboxTree removes an invocation's sandbox tree and its git
// registration (the branch, the logs and checkpoints.json are kept). It
// refuses any path outside the data directory's sandboxes tree. The caller
// decides whether the tree may hold unlanded work; the caller holds the
// repo lock.
func (a *App) RemoveSandboxTree(ctx context.Context, rec *store.InvocationRecord) error {
	tree := a.Store.SandboxTreePath(rec.InvocationID)
	if err := store.CheckInside(a.Store.SandboxesDir(), tree); err != nil {
		return err
	}
	if rec.SandboxPath != "" && filepath.Clean(rec.SandboxPath) != filepath.Clean(tree) {
		return errs.UnsafePath(rec.SandboxPath, tree)
	}

	return a.removeTreeAt(ctx, a.Store.SandboxesDir(), tree)
}

// removeTreeAt removes the worktree at tree (inside root, our data
// directory) and git's registration of it, then prunes our registrations
// whose tree is gone. A tree path that is no directory (another program
// put a symlink there, to one of the user's worktrees say, or a file) is
// removed itself and never followed: git, asked to remove it, would remove
// the worktree it points to.
func (a *App) removeTreeAt(ctx context.Context, root, tree string) error {
	fi, err := os.Lstat(tree)
	switch {
	case err != nil:
	case !fi.IsDir():
		if err := store.RemoveAllInside(root, tree); err != nil {
			return err
		}
	case a.Repo.WorktreeRemove(ctx, tree, true) != nil:
		// Not a registered worktree any more: remove the directory.
		if err := store.RemoveAllInside(root, tree); err != nil {
			return err
		}
	}

	return a.pruneOurs(ctx)
}

// ResolveInvocation finds an invocation by id or unique id prefix. A broken
// record (reachable only by exact id) is E_STORE_CORRUPT.
func (a *App) ResolveInvocation(query string) (*store.InvocationRecord, error) {
	list, err := a.Store.ScanInvocations()
	if err != nil {
		return nil, errs.IO("scan", a.Store.InvocationsDir(), err)
	}

	i, err := store.Resolve("invocation", query, store.InvocationCandidates(list), store.ResolveOptions{})
	if err != nil {
		return nil, err
	}

	e := list[i]
	if e.Broken {
		ce := errs.StoreCorrupt(filepath.Join(e.Dir, "meta.json"), e.Err)
		return nil, ce.With("record directory: " + e.Dir)
	}

	// The scan may serve a finished record from its cache without looking
	// at the file; the one record a command names is read from the file,
	// so a meta.json another program changed or damaged is seen (one
	// read, whatever the history's size).
	rec, err := a.Store.ReadInvocation(e.ID)
	if err == nil && rec.InvocationID != e.ID {
		err = fmt.Errorf("its invocation_id is %q", rec.InvocationID)
	}

	if err != nil {
		ce := errs.StoreCorrupt(filepath.Join(e.Dir, "meta.json"), err)
		return nil, ce.With("record directory: " + e.Dir)
	}

	return rec, nil
}

// WorktreeByID reads a worktree record by exact id.
func (a *App) WorktreeByID(id string) (*store.WorktreeRecord, error) {
	rec, err := a.Store.ReadWorktree(id)
	if err != nil {
		if os.IsNotExist(err) {
			return nil, errs.NotFound("worktree", id)
		}
		return nil, errs.StoreCorrupt(a.Store.IntegrationWorktreeMetaPath(id), err)
	}

	return rec, nil
}
