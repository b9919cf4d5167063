package agency

import (
	"context"
	"os"
	"path/filepath"
	"strings"

	"github.com/git-agency/git-agency/errs"
	"github.com/git-agency/git-agency/gitcore"
	"github.com/git-agency/git-agency/store"
)

// An integration tree's directory can go behind git-agency's back: removed
// (rm -rf), moved with `git worktree move`, or moved with the whole data
// directory, which leaves the record naming the old path. Commands that act on the tree refuse either with
// the cause and a way back, never with git's "chdir: no such file".

// treeGoneErr is the refusal for wt when its directory is missing: moved
// (treeMoved) or gone. nil when the
// directory is there.
func (a *App) treeGoneErr(ctx context.Context, wt *store.WorktreeRecord) error {
	if fi, err := os.Stat(wt.TreePath); err == nil && fi.IsDir() {
		return nil
	}
	if e := a.treeMoved(ctx, wt); e != nil {
		return e
	}
	return errs.WorktreeTreeGone(wt.Name, wt.TreePath)
}

// treeMoved says where wt's missing tree went: the whole data directory
// was moved, or the tree alone (`git worktree move`). nil when neither.
func (a *App) treeMoved(ctx context.Context, wt *store.WorktreeRecord) *errs.Error {
	if from := a.dataDirMovedFrom(wt); from != "" {
		return errs.DataDirMoved(from, a.Store.DataDir)
	}
	if to := a.movedTo(ctx, wt); to != "" {
		return errs.WorktreeMoved(wt.Name, wt.TreePath, to)
	}
	return nil
}

// dataDirMovedFrom is the data directory wt's record was written under
// when that is not this one and the tree is in this one at the same place
// (the user moved the data directory, say to a bigger disk): the records
// and git's registrations still name the old paths. "" otherwise.
func (a *App) dataDirMovedFrom(wt *store.WorktreeRecord) string {
	if wt.Adopted {
		return ""
	}

	here := a.Store.IntegrationWorktreeTreePath(wt.WorktreeID)
	rel, err := filepath.Rel(a.Store.DataDir, here)
	if err != nil || !strings.HasSuffix(wt.TreePath, string(filepath.Separator)+rel) {
		return ""
	}

	from := strings.TrimSuffix(wt.TreePath, string(filepath.Separator)+rel)
	if from == a.Store.DataDir {
		return ""
	}
	if fi, err := os.Stat(here); err != nil || !fi.IsDir() {
		return ""
	}

	return from
}

// movedTo is where git has wt's branch checked out when that is another
// directory that exists ("" otherwise): the tree was moved with `git
// worktree move`.
func (a *App) movedTo(ctx context.Context, wt *store.WorktreeRecord) string {
	list, err := a.Repo.Worktrees(ctx)
	if err != nil {
		return ""
	}
	return movedIn(list, wt)
}

func movedIn(list []gitcore.Worktree, wt *store.WorktreeRecord) string {
	for _, w := range list {
		if w.Branch != "refs/heads/"+wt.Branch || samePath(w.Path, wt.TreePath) {
			continue
		}
		if fi, err := os.Stat(w.Path); err == nil && fi.IsDir() {
			return w.Path
		}
	}

	return ""
}

// restoreMarker puts back the integration marker of wt, a tree already
// checked to be on its recorded branch, when its whole .agency/ is gone:
// `git clean -x` in the tree removes it (the directory ignores itself).
// The record says the tree is ours, so the marker is written again and the
// user told. A .agency/ without the marker is someone else's: refused.
func (a *App) restoreMarker(wt *store.WorktreeRecord) error {
	if HasMarker(wt.TreePath) {
		return nil
	}

	dir := filepath.Join(wt.TreePath, store.AgencyDir)
	if _, err := os.Lstat(dir); err == nil {
		temps, ours := markerLeftovers(dir)
		if !ours {
			return errs.NoMarker(wt.Name, store.MarkerPath(wt.TreePath), dir)
		}

		// A WriteMarker killed part way: finish it.
		for _, t := range temps {
			_ = os.Remove(t)
		}
	}

	if err := WriteMarker(wt.TreePath); err != nil {
		return err
	}

	a.warn("", errs.MarkerRestored(wt.Name, wt.TreePath))
	return nil
}

// markerLeftovers says whether the .agency/ dir holds only what a killed
// WriteMarker leaves: our "*" .gitignore and the temp files of its atomic
// writes (at least one of them: an empty or foreign .agency/ is not ours to
// fill). temps are those temp files.
func markerLeftovers(dir string) (temps []string, ours bool) {
	ents, err := os.ReadDir(dir)
	if err != nil || len(ents) == 0 {
		return nil, false
	}

	for _, e := range ents {
		name := e.Name()
		switch {
		case !e.Type().IsRegular():
			return nil, false
		case name == ".gitignore":
			if b, err := os.ReadFile(filepath.Join(dir, name)); err != nil || string(b) != agencyIgnore {
				return nil, false
			}
		case strings.HasPrefix(name, "..gitignore.tmp-"), strings.HasPrefix(name, "."+store.MarkerFile+".tmp-"):
			temps = append(temps, filepath.Join(dir, name))
		default:
			return nil, false
		}
	}

	return temps, true
}
