package agency

import (
	"context"
	"os"
	"path/filepath"

	"github.com/git-agency/git-agency/agency/internal/core"
	"github.com/git-agency/git-agency/errs"
	"github.com/git-agency/git-agency/internal/subproc"
	"github.com/git-agency/git-agency/store"
)

// HasMarker reports whether tree holds the integration marker (core).
func HasMarker(tree string) bool { return core.HasMarker(tree) }

// CreateWorktreeOptions are the inputs of `worktree create`.
type CreateWorktreeOptions struct {
	Name   string
	Parent string // "" = the current branch
	// Full opts out of inheriting the current tree's sparse checkout.
	Full bool
}

// FPRemoveAfterLog fails a worktree rm --force once it logged itself,
// before the tree goes.
const FPRemoveAfterLog = "worktree-rm:after-log"

// Failpoint names of CreateWorktree, in order.
const (
	FPCreateAfterMkdir       = "worktree-create:after-mkdir"
	FPCreateAfterWorktreeAdd = "worktree-create:after-worktree-add"
	FPCreateAfterMarker      = "worktree-create:after-marker"
	// FPCreateRecordSync: meta.json's temp file is written and fsynced,
	// not yet renamed.
	FPCreateRecordSync = "worktree-create:record-fsync"
)

// CreateWorktree creates a named integration worktree: record directory,
// `git worktree add -b agency/<name>-<short>`, marker, then meta.json. Any
// failure after the worktree exists removes the tree, its registration, its
// branch and the record directory. The tree it is made from must have no
// uncommitted changes to tracked files; that check runs beside the
// checkout (trackedCheck) and, when it finds changes, stops it.
func (a *App) CreateWorktree(ctx context.Context, opts CreateWorktreeOptions) (*store.WorktreeRecord, error) {
	if !store.ValidName(opts.Name) {
		return nil, errs.InvalidName(opts.Name)
	}

	parent := opts.Parent
	if parent == "" {
		b, err := a.currentBranch(ctx, a.Repo.Toplevel)
		if err != nil {
			return nil, gitErr(err)
		}
		if b == "" {
			return nil, errs.DetachedHead()
		}

		parent = b
	}

	if _, err := a.Repo.RevParse(ctx, parent); err != nil {
		if ok, _ := a.Repo.BranchExists(ctx, parent); ok || opts.Parent == "" {
			// An unborn branch: it has no commit to start from.
			return nil, errs.New(errs.EBranchNotFound, "make a first commit on it", "branch %q has no commits yet", parent)
		}
		return nil, errs.BranchNotFound(parent)
	}

	check := a.checkTrackedChanges(ctx, a.Repo.Toplevel)
	defer check.stop()

	// Whatever fails before the check has answered waits for it: a tree
	// with changes is refused first, as when it was checked first.
	first := func(err error) error { return a.dirtyParentFirst(ctx, check, a.Repo.Toplevel, err) }

	// A bad .worktreeinclude is refused before anything is made.
	include, err := a.includePatterns(a.Repo.Toplevel)
	if err != nil {
		return nil, first(err)
	}

	ctx, unlock, err := a.lockWork(ctx)
	if err != nil {
		return nil, first(err)
	}
	defer unlock()
	return a.createWorktreeLocked(ctx, opts, parent, include, check, first)
}

// createWorktreeLocked is CreateWorktree under the repo lock, from the
// record directory on.
func (a *App) createWorktreeLocked(ctx context.Context, opts CreateWorktreeOptions, parent string, include IncludeSpec, check *trackedCheck, first func(error) error) (*store.WorktreeRecord, error) {
	list, err := a.Store.ScanWorktrees()
	if err != nil {
		return nil, first(errs.IO("scan", a.Store.IntegrationWorktreesDir(), err))
	}

	for _, e := range list {
		if e.Record != nil && e.Record.State == store.StatePresent && e.Record.Name == opts.Name {
			return nil, first(errs.NameTaken(opts.Name, e.ID))
		}
	}

	id, err := store.MkdirID(a.Store.IntegrationWorktreesDir(), a.Now())
	if err != nil {
		return nil, first(err)
	}

	recordDir := a.Store.IntegrationWorktreeDir(id)
	tree := a.Store.IntegrationWorktreeTreePath(id)
	branch := "agency/" + opts.Name + "-" + store.ShortID(id)
	worktreeAdded := false
	cleanup := func() error {
		return a.undoAdd(ctx, worktreeAdded, a.Store.IntegrationWorktreesDir(), recordDir, tree, branch)
	}
	if err := markCreator(recordDir); err != nil {
		return nil, withCleanup(first(err), cleanup())
	}
	if err := a.fail(FPCreateAfterMkdir); err != nil {
		return nil, withCleanup(first(err), cleanup())
	}
	if a.branchExists(ctx, branch) {
		return nil, withCleanup(first(errs.New(errs.ENameTaken, "delete or rename that branch, or choose another name", "branch %q already exists", branch)), cleanup())
	}

	addCtx, release := check.stopOnFound(ctx)
	sparse, err := a.addTree(addCtx, a.Repo.Toplevel, tree, branch, parent, opts.Full)
	release()

	// git may have left a branch or registration behind before failing
	// (or being stopped because the tree has changes).
	worktreeAdded = true

	if err := first(err); err != nil {
		return nil, withCleanup(err, cleanup())
	}

	rec := &store.WorktreeRecord{
		SchemaVersion: store.SchemaVersion,
		WorktreeID:    id,
		Name:          opts.Name,
		RepoID:        a.Store.RepoID,
		Branch:        branch,
		ParentBranch:  parent,
		TreePath:      tree,
		CreatedAt:     a.now(),
		LastUsedAt:    a.now(),
		State:         store.StatePresent,
		Sparse:        sparse,
	}
	if err := a.finishWorktree(ctx, rec, include); err != nil {
		return nil, withCleanup(err, cleanup())
	}

	return rec, nil
}

// finishWorktree makes a just-added tree an integration worktree: the
// marker, the .worktreeinclude copy, then the record. On error the caller
// takes everything back.
func (a *App) finishWorktree(ctx context.Context, rec *store.WorktreeRecord, include IncludeSpec) error {
	if err := a.fail(FPCreateAfterWorktreeAdd); err != nil {
		return err
	}
	if err := agencyDirFree(rec.TreePath, rec.ParentBranch); err != nil {
		return err
	}
	if err := WriteMarker(rec.TreePath); err != nil {
		return err
	}
	if err := a.fail(FPCreateAfterMarker); err != nil {
		return err
	}

	// Ignored files the user listed come from the tree we run in.
	included, err := a.includeIntoTree(ctx, include, a.Repo.Toplevel, rec.TreePath, nil)
	if err != nil {
		return err
	}

	rec.Include = included
	return a.Store.WriteWorktreeThen(rec, func() error { return a.fail(FPCreateRecordSync) })
}

// WriteMarker writes .agency/INTEGRATION_MARKER and a .agency/.gitignore
// that keeps the directory out of `git status` and out of commits.
func WriteMarker(tree string) error {
	dir := filepath.Join(tree, store.AgencyDir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return errs.IO("create", dir, err)
	}
	if err := WriteAgencyIgnore(tree); err != nil {
		return err
	}
	if err := store.WriteFileAtomic(store.MarkerPath(tree), []byte("# git-agency integration worktree: agents never run here.\n"), 0o644); err != nil {
		return err
	}

	return nil
}

// agencyDirFree refuses a tree just checked out from commit that has a
// .agency/ already: the repository tracks files there (E_AGENCY_DIR), which
// our marker and .gitignore would change, and land would leave out.
func agencyDirFree(tree, commit string) error {
	if _, err := os.Lstat(filepath.Join(tree, store.AgencyDir)); err == nil {
		return errs.AgencyDirTracked(ShortSHA(commit))
	}
	return nil
}

// WriteAgencyIgnore makes a tree's .agency/ invisible to git.
func WriteAgencyIgnore(tree string) error {
	dir := filepath.Join(tree, store.AgencyDir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return errs.IO("create", dir, err)
	}
	return store.WriteFileAtomic(filepath.Join(dir, ".gitignore"), []byte(agencyIgnore), 0o644)
}

// agencyIgnore is a tree's .agency/.gitignore: the directory ignores itself.
const agencyIgnore = "*\n"

// WorktreeList is `worktree ls`: present ones, or all (archived and broken).
func (a *App) listWorktrees(all bool) ([]store.WorktreeEntry, error) {
	list, err := a.Store.ScanWorktrees()
	if err != nil {
		return nil, errs.IO("scan", a.Store.IntegrationWorktreesDir(), err)
	}
	if all {
		return list, nil
	}

	var out []store.WorktreeEntry
	for _, e := range list {
		if e.Record != nil && e.Record.State == store.StatePresent {
			out = append(out, e)
		}
	}

	return out, nil
}

// ResolveWorktree finds a worktree by name, id or unique id prefix. A
// broken record (reachable only by exact id) is E_STORE_CORRUPT with its
// directory.
func (a *App) ResolveWorktree(query string, all bool) (*store.WorktreeEntry, error) {
	list, err := a.Store.ScanWorktrees()
	if err != nil {
		return nil, errs.IO("scan", a.Store.IntegrationWorktreesDir(), err)
	}

	i, err := store.Resolve("worktree", query, store.WorktreeCandidates(list), store.ResolveOptions{All: all})
	if err != nil {
		return nil, err
	}

	e := list[i]
	if e.Broken {
		return nil, brokenWorktree(e)
	}

	return &e, nil
}

// brokenWorktree is the error for a corrupt worktree record.
func brokenWorktree(e store.WorktreeEntry) error {
	ce := errs.StoreCorrupt(filepath.Join(e.Dir, "meta.json"), e.Err)
	return ce.With("record directory: " + e.Dir)
}

// ResolvePresentWorktree resolves a worktree whose tree must exist.
func (a *App) ResolvePresentWorktree(query string) (*store.WorktreeRecord, error) {
	e, err := a.ResolveWorktree(query, false)
	if err != nil {
		return nil, err
	}
	if e.Record.State != store.StatePresent {
		return nil, errs.Archived(e.Record.Name, e.ID)
	}

	return e.Record, nil
}

// Editor returns the editor command: flag, agency.editor, $VISUAL, $EDITOR.
func (a *App) Editor(flag string) (string, error) {
	if flag != "" {
		return flag, nil
	}
	if v, ok := a.Config.Get("agency.editor"); ok && v != "" {
		return v, nil
	}

	for _, k := range []string{"VISUAL", "EDITOR"} {
		if v := a.Getenv(k); v != "" {
			return v, nil
		}
	}

	return "", errs.NoEditor()
}

// EditorCmd builds the command that opens path in editor. The editor string
// goes through the shell, as git does with core.editor, so "code --wait"
// works; the path is passed as an argument, never interpolated. The editor
// acts on another tree than the one git may have pointed us at, so it does
// not get git's repository variables (subproc.ScrubRepo).
func EditorCmd(editor, path string) *subproc.Terminal {
	return subproc.ShellTerminal(editor+` "$@"`, "", subproc.ScrubRepo(os.Environ()), editor, path)
}

// ShellCmd builds `$SHELL -l` in dir (a child process, not exec), without
// git's repository variables (a GIT_DIR exported to us would make git in
// that shell act on another repository than the tree's), TMUX kept.
func ShellCmd(getenv func(string) string, dir string) *subproc.Terminal {
	sh := getenv("SHELL")
	if sh == "" {
		sh = "/bin/sh"
	}
	return subproc.NewTerminal([]string{sh, "-l"}, dir, subproc.ScrubRepo(os.Environ()))
}

// CheckOnBranch refuses an integration tree that is gone or moved
// (treeGoneErr), or not on its recorded branch: landing would move whatever is checked out instead, and a new
// sandbox would start from the wrong commit.
func (a *App) CheckOnBranch(ctx context.Context, wt *store.WorktreeRecord) error {
	if err := a.treeGoneErr(ctx, wt); err != nil {
		return err
	}

	br, err := a.currentBranch(ctx, wt.TreePath)
	if err != nil {
		return gitErr(err)
	}
	if br == wt.Branch {
		return nil
	}

	if br != "" {
		if ok, err := a.Repo.BranchExists(ctx, wt.Branch); err == nil && !ok {
			return errs.WrongBranchRenamed(wt.Name, wt.TreePath, br, wt.Branch)
		}
		return errs.WrongBranch(wt.Name, wt.TreePath, "branch "+br, wt.Branch)
	}

	return errs.WrongBranch(wt.Name, wt.TreePath, "a detached HEAD", wt.Branch)
}

// currentBranch is the tree's CurrentBranch, read from its HEAD file when
// that tells (gitcore's BranchFromFiles), else asked of git: create and
// start look at it on every run.
func (a *App) currentBranch(ctx context.Context, tree string) (string, error) {
	t := a.Repo.Tree(tree)
	if b, ok := t.BranchFromFiles(); ok {
		return b, nil
	}
	return t.CurrentBranch(ctx)
}

// branchExists tells whether the branch exists, from the ref files when
// they tell (gitcore's BranchExistsFromFiles), else asked of git; an error
// says no, and git's own refusal to make it then says why.
func (a *App) branchExists(ctx context.Context, branch string) bool {
	if exists, ok := a.Repo.BranchExistsFromFiles(branch); ok {
		return exists
	}
	ok, _ := a.Repo.BranchExists(ctx, branch)
	return ok
}

// treeHead is the tree's Head, read from files when they tell
// (gitcore's HeadFromFiles), else asked of git.
func (a *App) treeHead(ctx context.Context, tree string) (string, error) {
	t := a.Repo.Tree(tree)
	if h := t.HeadFromFiles(); h != "" {
		return h, nil
	}
	return t.Head(ctx)
}

// WorktreeHere is the id of the present integration worktree this command
// runs in ("" when it runs elsewhere): where you are is enough for
// `agent start`.
func (a *App) WorktreeHere() string {
	top := a.Repo.Toplevel
	if top == "" {
		return ""
	}

	if !HasMarker(top) {
		// One file read: most commands run elsewhere. A linked tree without
		// the marker may still be ours after a `git clean -x` (agent start
		// writes it again): its record says.
		if fi, err := os.Lstat(filepath.Join(top, ".git")); err != nil || fi.IsDir() {
			return ""
		}
	}

	list, err := a.Store.ScanWorktrees()
	if err != nil {
		return ""
	}

	for _, e := range list {
		if r := e.Record; r != nil && r.State == store.StatePresent && samePath(r.TreePath, top) {
			return r.WorktreeID
		}
	}

	return ""
}

// samePath tells whether two paths name one directory (symlinks resolved).
func samePath(a, b string) bool {
	if a == b {
		return true
	}
	ra, err1 := filepath.EvalSymlinks(a)
	rb, err2 := filepath.EvalSymlinks(b)
	return err1 == nil && err2 == nil && ra == rb
}

// SandboxPath is `agent path`: the sandbox tree of an invocation, which
// must still be there.
func (a *App) SandboxPath(query string) (string, error) {
	rec, err := a.ResolveInvocation(query)
	if err != nil {
		return "", err
	}

	tree := a.sandboxTree(rec)
	if tree == "" {
		return "", sandboxGone(rec, a.Store.SandboxTreePath(rec.InvocationID))
	}

	return tree, nil
}
