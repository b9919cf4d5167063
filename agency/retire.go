package agency

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/git-agency/git-agency/runner"
	"github.com/git-agency/git-agency/store"
)

// retireSandboxTree takes a landed sandbox's tree away in one step, as
// RemoveSandboxTree does in as many as it has files: the tree is renamed
// into the retired directory (store.RetiredDir), its git worktree
// registration removed, and its files deleted afterwards by a remover
// process (removeRetired), so a land does not wait for a full checkout to
// be deleted. Where the rename cannot be made (another file system), the
// tree is removed here. Idempotent, like RemoveSandboxTree.
func (a *App) retireSandboxTree(ctx context.Context, rec *store.InvocationRecord) error {
	tree := a.Store.SandboxTreePath(rec.InvocationID)
	if err := store.CheckInside(a.Store.SandboxesDir(), tree); err != nil {
		return err
	}
	if rec.SandboxPath != "" && filepath.Clean(rec.SandboxPath) != filepath.Clean(tree) {
		return a.RemoveSandboxTree(ctx, rec) // refuses, saying why
	}

	if fi, err := os.Lstat(tree); err != nil {
		return a.pruneOurs(ctx)
	} else if !fi.IsDir() {
		return a.RemoveSandboxTree(ctx, rec) // the link itself, never what it names
	}

	dir := a.Store.RetiredDir()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return a.RemoveSandboxTree(ctx, rec)
	}

	admin := a.registrationOf(tree)
	dst := filepath.Join(dir, rec.InvocationID+"-"+strconv.FormatInt(a.Now().UnixNano(), 36))
	if err := os.Rename(tree, dst); err != nil {
		return a.RemoveSandboxTree(ctx, rec)
	}

	if admin != "" {
		// Removed even when locked, as `git worktree remove --force
		// --force` would: its tree is gone.
		if err := a.Repo.RemoveRegistration(admin); err != nil {
			return err
		}
	}

	a.removeRetired()
	return a.pruneOurs(ctx)
}

// registrationOf is git's registration directory of the worktree at tree
// (from its .git file, and only when that registration names tree back),
// or "". The paths are compared with their last component as it is: a
// registration of the worktree a symlink at tree names is not tree's.
func (a *App) registrationOf(tree string) string {
	b, err := os.ReadFile(filepath.Join(tree, ".git"))
	if err != nil {
		return ""
	}

	admin, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir: ")
	if !ok || !inside(filepath.Join(a.Repo.CommonDir, "worktrees"), admin) {
		return ""
	}

	back, err := os.ReadFile(filepath.Join(admin, "gitdir"))
	if err != nil || canonicalParent(filepath.Dir(strings.TrimSpace(string(back)))) != canonicalParent(tree) {
		return ""
	}

	return admin
}

// removeRetired has the retired trees deleted: by a remover process that
// outlives this command (runner.SpawnRemover) when a.DetachRemovals is
// set, else (or when none can be started) here and now. Nothing is said
// when that fails: what is left, doctor reports and gc removes.
func (a *App) removeRetired() {
	dir := a.Store.RetiredDir()
	lock, ok, err := store.LockRetired(dir, false)
	if err != nil {
		return
	}

	if ok {
		defer lock.Close()
	}

	if a.DetachRemovals && runner.SpawnRemover(a.Store.DataDir, dir, lock) == nil {
		return
	}

	if ok {
		// What is left, doctor reports and gc removes (see above).
		_ = store.RemoveRetired(a.Store.DataDir, dir)
	}
}

// retiredLeftovers are the retired trees no remover works on (one was
// killed, or could not start): gc removes them.
func (a *App) retiredLeftovers() []Leftover {
	dir := a.Store.RetiredDir()
	entries := store.RetiredEntries(dir)
	if len(entries) == 0 {
		return nil
	}

	lock, ok, err := store.LockRetired(dir, false)
	if err != nil || !ok {
		return nil // a remover is at work
	}
	defer lock.Close()
	var out []Leftover
	for _, e := range entries {
		out = append(out, Leftover{Kind: GCRetiredTree, Path: e, Bytes: store.DirSize(e),
			Reason: "the tree of a landed sandbox, whose removal was cut short"})
	}

	return out
}

// removeRetiredLeftover removes one retired tree gc planned, unless a
// remover works on them now.
func (a *App) removeRetiredLeftover(it *GCItem) error {
	dir := a.Store.RetiredDir()
	lock, ok, err := store.LockRetired(dir, false)
	if err != nil {
		return err
	}

	if !ok {
		it.Kept, it.KeptWhy = true, "a remover is deleting it now"
		return nil
	}
	defer lock.Close()
	return store.RemoveAllInside(dir, it.Target)
}

// canonicalParent is path with its directory canonical (symlinks resolved)
// and its last component as it is.
func canonicalParent(path string) string {
	p, err := filepath.Abs(path)
	if err != nil {
		p = path
	}
	return filepath.Join(canonical(filepath.Dir(p)), filepath.Base(p))
}
