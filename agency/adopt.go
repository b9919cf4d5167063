package agency

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/git-agency/git-agency/agency/internal/core"
	"github.com/git-agency/git-agency/errs"
	"github.com/git-agency/git-agency/gitcore"
	"github.com/git-agency/git-agency/store"
)

// AdoptWorktreeOptions are the inputs of `worktree adopt`.
type AdoptWorktreeOptions struct {
	Path string // the existing linked worktree (or a directory inside it)
	Name string // "" = derived from the branch, else the directory name
}

// FPAdoptAfterMarker fails an adopt after the marker is written.
const FPAdoptAfterMarker = "worktree-adopt:after-marker"

// AdoptWorktree turns an existing linked worktree of this repository into
// an integration worktree: a record whose tree_path is the existing
// directory (nothing is moved), adopted = true, the marker and an ignored
// .agency/ written into it, its branch kept as it is. It refuses the main
// worktree, another repository's worktree, a directory that is not a
// worktree, a detached HEAD, a sandbox, a tree that is already an
// integration worktree and a tree with a .agency/ of its own.
func (a *App) AdoptWorktree(ctx context.Context, opts AdoptWorktreeOptions) (*store.WorktreeRecord, error) {
	if opts.Name != "" && !store.ValidName(opts.Name) {
		return nil, errs.InvalidName(opts.Name)
	}

	tree, branch, err := a.adoptableTree(ctx, opts.Path)
	if err != nil {
		return nil, err
	}

	name := opts.Name
	if name == "" {
		name = adoptName(branch, tree)
	}

	// No subprocess runs under this lock: records and marker files only.
	_, unlock, err := a.lockWork(ctx)
	if err != nil {
		return nil, err
	}
	defer unlock()

	if err := a.checkAdoptLocked(tree, name, opts.Name != ""); err != nil {
		return nil, err
	}

	return a.writeAdoptedLocked(tree, name, branch)
}

// adoptableTree finds the linked worktree at path and checks it can be
// adopted: a worktree of this repository (its top directory, not one
// inside it), not the main worktree, not a sandbox, on a branch. It
// returns the tree's canonical path and its branch name.
func (a *App) adoptableTree(ctx context.Context, path string) (tree, branch string, err error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", "", errs.NotAWorktree(path)
	}
	if fi, err := os.Stat(abs); err != nil || !fi.IsDir() {
		return "", "", errs.NotAWorktree(abs)
	}

	loc, ok, err := a.Repo.Locate(ctx, abs)
	if err != nil {
		return "", "", gitErr(err)
	}
	if !ok || loc.Bare {
		return "", "", errs.NotAWorktree(abs)
	}
	if loc.CommonDir != a.Repo.CommonDir {
		return "", "", errs.OtherRepo(abs, loc.CommonDir)
	}

	tree = canonical(loc.Toplevel)
	if canonical(abs) != tree {
		return "", "", errs.NotAWorktree(abs).With("it is a directory inside the worktree at " + tree)
	}

	wt, err := a.linkedWorktree(ctx, abs, tree)
	if err != nil {
		return "", "", err
	}
	if inside(a.Store.SandboxesDir(), tree) {
		return "", "", errs.ManagedTree(tree)
	}
	if wt.Detached || wt.Branch == "" {
		return "", "", errs.AdoptDetached(tree)
	}

	return tree, strings.TrimPrefix(wt.Branch, "refs/heads/"), nil
}

// linkedWorktree is git's entry for tree, refusing the main worktree (git
// lists it first) and a directory git does not list.
func (a *App) linkedWorktree(ctx context.Context, abs, tree string) (*gitcore.Worktree, error) {
	list, err := a.Repo.Worktrees(ctx)
	if err != nil {
		return nil, gitErr(err)
	}

	for i := range list {
		if canonical(list[i].Path) != tree {
			continue
		}
		if i == 0 {
			return nil, errs.MainWorktree(tree)
		}
		return &list[i], nil
	}

	return nil, errs.NotAWorktree(abs)
}

// adoptName derives an adopted worktree's name from its branch, else its
// directory, else "adopted".
func adoptName(branch, tree string) string {
	for _, n := range []string{sanitizeName(branch), sanitizeName(filepath.Base(tree))} {
		if store.ValidName(n) {
			return n
		}
	}
	return "adopted"
}

// checkAdoptLocked refuses a tree that is already an integration worktree
// (adopted or created) and a name a present worktree has. named is true
// when the user chose the name.
func (a *App) checkAdoptLocked(tree, name string, named bool) error {
	entries, err := a.Store.ScanWorktrees()
	if err != nil {
		return errs.IO("scan", a.Store.IntegrationWorktreesDir(), err)
	}

	for _, e := range entries {
		if e.Record != nil && e.Record.State == store.StatePresent && canonical(e.Record.TreePath) == tree {
			return errs.AlreadyAdopted(tree, e.Record.Name, e.ID)
		}
	}

	if HasMarker(tree) || inside(a.Store.IntegrationWorktreesDir(), tree) {
		return errs.AlreadyIntegrationTree(tree)
	}

	// A .agency/ of the user's own: our marker and .gitignore would
	// overwrite theirs and hide their files (E_AGENCY_DIR, as create and
	// start refuse a commit that tracks files there).
	if _, err := os.Lstat(filepath.Join(tree, store.AgencyDir)); err == nil {
		return errs.AgencyDirInTree(tree)
	}

	for _, e := range entries {
		if e.Record != nil && e.Record.State == store.StatePresent && e.Record.Name == name {
			if !named {
				return errs.AdoptNameTaken(name, e.ID)
			}
			return errs.NameTaken(name, e.ID)
		}
	}

	return nil
}

// writeAdoptedLocked writes the marker into the tree and the record; a
// failure takes both back.
func (a *App) writeAdoptedLocked(tree, name, branch string) (*store.WorktreeRecord, error) {
	id, err := store.MkdirID(a.Store.IntegrationWorktreesDir(), a.Now())
	if err != nil {
		return nil, err
	}

	recordDir := a.Store.IntegrationWorktreeDir(id)
	marks := adoptMarks(tree)
	cleanup := func() error {
		return errors.Join(undoAdoptMarks(marks), store.RemoveAllInside(a.Store.IntegrationWorktreesDir(), recordDir))
	}

	// The creator marker says where the marker goes before it is written,
	// so that gc takes it back after a kill (see removeWorktreeLeftover).
	if err := markAdoptCreator(recordDir, marks); err != nil {
		return nil, withCleanup(err, cleanup())
	}
	if err := WriteMarker(tree); err != nil {
		return nil, withCleanup(err, cleanup())
	}
	if err := a.fail(FPAdoptAfterMarker); err != nil {
		return nil, withCleanup(err, cleanup())
	}

	rec := &store.WorktreeRecord{
		SchemaVersion: store.SchemaVersion,
		WorktreeID:    id,
		Name:          name,
		RepoID:        a.Store.RepoID,
		Branch:        branch,
		TreePath:      tree,
		CreatedAt:     a.now(),
		LastUsedAt:    a.now(),
		State:         store.StatePresent,
		Adopted:       true,
	}
	if err := a.Store.WriteWorktree(rec); err != nil {
		return nil, withCleanup(err, cleanup())
	}

	return rec, nil
}

// adoptMarks says what WriteMarker will add to tree: the marker, and
// .agency/ and its .gitignore when they are not there yet.
func adoptMarks(tree string) store.AdoptMarks {
	dir := filepath.Join(tree, store.AgencyDir)
	_, dirErr := os.Lstat(dir)
	_, ignErr := os.Lstat(filepath.Join(dir, ".gitignore"))
	return store.AdoptMarks{Tree: tree, MadeDir: os.IsNotExist(dirErr), MadeIgnore: os.IsNotExist(ignErr)}
}

// undoAdoptMarks removes what WriteMarker added to m.Tree, and only that:
// the marker, the temp files of its writes cut short, the .gitignore and
// .agency/ (when empty) if it made them. Nothing recursive: the tree is
// the user's. It says what it could not remove.
func undoAdoptMarks(m store.AdoptMarks) error {
	dir := filepath.Join(m.Tree, store.AgencyDir)
	remove := func(path string) error {
		if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
			return errs.IO("remove", path, err)
		}
		return nil
	}
	err := remove(store.MarkerPath(m.Tree))
	for _, t := range store.FilesIn([]string{dir}, isMarkerTemp) {
		err = errors.Join(err, remove(t.Path))
	}

	if m.MadeIgnore {
		err = errors.Join(err, remove(filepath.Join(dir, ".gitignore")))
	}

	if m.MadeDir {
		err = errors.Join(err, remove(dir))
	}

	return err
}

// isMarkerTemp is core.IsMarkerTemp.
func isMarkerTemp(name string) bool { return core.IsMarkerTemp(name) }

var (
	nonNameRE = regexp.MustCompile(`[^a-z0-9]+`)
	dashesRE  = regexp.MustCompile(`-+`)
)

// sanitizeName derives an integration worktree name from a branch or
// directory name, after Automaker's branch-name sanitisation, narrowed to
// our name rules: lower case; every run of characters other than a-z and
// 0-9 (slashes, spaces, dots, colons, …) becomes one '-'; no leading or
// trailing '-'; at most 40 characters. The result may still be invalid
// (too short); the caller checks.
func sanitizeName(s string) string {
	s = strings.ToLower(s)
	s = nonNameRE.ReplaceAllString(s, "-")
	s = dashesRE.ReplaceAllString(s, "-")
	s = strings.Trim(s, "-")
	if len(s) > 40 {
		s = strings.TrimRight(s[:40], "-")
	}

	return s
}

// canonical is core.Canonical.
func canonical(path string) string { return core.Canonical(path) }

// inside is core.Inside.
func inside(root, path string) bool { return core.Inside(root, path) }
