package agency

import (
	"context"
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
	base, err := a.Repo.Tree(wt.TreePath).Head(ctx)
	if err != nil {
		return "", gitErr(err)
	}
	if base == "" {
		return "", errs.New(errs.EBranchNotFound, "commit something first", "integration branch %s has no commits", wt.Branch)
	}
	if err := os.MkdirAll(a.Store.SandboxesDir(), 0o700); err != nil {
		return "", errs.IO("create", a.Store.SandboxesDir(), err)
	}
	dir := a.Store.SandboxDir(inv)
	if err := os.Mkdir(dir, 0o700); err != nil {
		return "", errs.IO("create", dir, err)
	}
	tree := a.Store.SandboxTreePath(inv)
	branch := store.SandboxBranch(inv)
	cleanup := func(added bool) {
		if added {
			a.Repo.WorktreeRemove(ctx, tree, true)
			a.pruneOurs(ctx)
			a.Repo.DeleteBranch(ctx, branch, true)
		}
		store.RemoveAllInside(a.Store.SandboxesDir(), dir)
	}
	if err := a.Repo.WorktreeAdd(ctx, tree, branch, base); err != nil {
		cleanup(true)
		return "", gitErr(err)
	}
	if err := a.fail("sandbox-create:after-worktree-add"); err != nil {
		cleanup(true)
		return "", err
	}
	if HasMarker(tree) {
		// The integration branch itself tracks a marker: never a sandbox.
		cleanup(true)
		return "", errs.New(errs.EIntegrationTree, "remove .agency/INTEGRATION_MARKER from the branch's commits",
			"the new sandbox holds an integration marker; refusing to use it")
	}
	if err := WriteAgencyIgnore(tree); err != nil {
		cleanup(true)
		return "", err
	}
	if err := os.MkdirAll(filepath.Join(tree, store.AgencyDir, "state"), 0o755); err != nil {
		cleanup(true)
		return "", errs.IO("create", filepath.Join(tree, store.AgencyDir, "state"), err)
	}
	if err := os.MkdirAll(a.Store.SandboxLogsDir(inv), 0o700); err != nil {
		cleanup(true)
		return "", errs.IO("create", a.Store.SandboxLogsDir(inv), err)
	}
	return base, nil
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
	if _, err := os.Stat(tree); err == nil {
		if err := a.Repo.WorktreeRemove(ctx, tree, true); err != nil {
			// Not a registered worktree any more: remove the directory.
			if err := store.RemoveAllInside(a.Store.SandboxesDir(), tree); err != nil {
				return err
			}
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
	return e.Record, nil
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
