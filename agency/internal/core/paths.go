package core

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/git-agency/git-agency/errs"
	"github.com/git-agency/git-agency/gitcore"

	"github.com/git-agency/git-agency/runner"
	"github.com/git-agency/git-agency/store"
)

// Canonical is path absolute, cleaned, symlinks resolved where possible.
func Canonical(path string) string {
	p, err := filepath.Abs(path)
	if err != nil {
		p = path
	}
	if r, err := filepath.EvalSymlinks(p); err == nil {
		p = r
	}
	return filepath.Clean(p)
}

// Inside reports whether path lies at or below root (both canonical).
func Inside(root, path string) bool {
	r, p := Canonical(root), Canonical(path)
	rel, err := filepath.Rel(r, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// IsAgencyFile tells the files git-agency writes in a tree's .agency/:
// the marker, the .gitignore and the temp files of their writes.
func IsAgencyFile(name string) bool {
	return name == store.MarkerFile || name == ".gitignore" || IsMarkerTemp(name)
}

// IsMarkerTemp tells the temp files of WriteMarker's two writes.
func IsMarkerTemp(name string) bool {
	return store.IsAtomicTemp(name) &&
		(strings.HasPrefix(name, "..gitignore"+store.AtomicTempMarker) || strings.HasPrefix(name, "."+store.MarkerFile+store.AtomicTempMarker))
}

// HasMarker reports whether tree holds the integration marker.
func HasMarker(tree string) bool {
	_, err := os.Lstat(store.MarkerPath(tree))
	return err == nil
}

// Creator states of a record directory without meta.json.
const (
	CreatorUnknown = iota // no marker: only the repo lock can tell
	CreatorAlive          // its create is still running: leave it alone
	CreatorGone           // killed: what it made is residue
)

// CreatorOf tells whether the process that made a record directory still
// runs (its pid with the same start time).
func CreatorOf(dir string) int {
	c, ok := store.ReadCreator(dir)
	if !ok {
		return CreatorUnknown
	}
	if runner.Alive(c.PID, c.StartTime) {
		return CreatorAlive
	}
	return CreatorGone
}

// PruneOurs removes git's registrations of worktrees inside our data
// directory whose directory is gone, and of the exact paths in also (an
// adopted tree that vanished), and only those: never the user's other
// stale worktrees (a removable disk, a moved folder: their staged work and
// HEAD live in the registration), never a locked one. It is the only way
// git-agency prunes: there is no plain `git worktree prune`.
func (c *Core) PruneOurs(ctx context.Context, also ...string) error {
	regs, err := c.Repo.AdminWorktrees()
	if err != nil {
		return errs.IO("read", filepath.Join(c.Repo.CommonDir, "worktrees"), err)
	}
	named := func(p string) bool {
		for _, x := range also {
			if Canonical(x) == Canonical(p) {
				return true
			}
		}
		return false
	}
	for _, w := range regs {
		if w.Locked || !(Inside(c.Store.RepoDir(), w.Path) || named(w.Path)) {
			continue
		}
		if _, err := os.Stat(w.Path); !os.IsNotExist(err) {
			continue
		}
		if err := c.Repo.RemoveRegistration(w.AdminDir); err != nil {
			return err
		}
	}
	return nil
}

// StreamLog is the log file, in an invocation's logs/ directory, that
// holds the normalised events the supervisor's stream parser writes.
const StreamLog = "stream.jsonl"

// LocalOnlySubmodules returns the paths of the submodules checked out in
// tree whose HEAD exists only there: a commit made inside it lives in the
// tree's own submodule repository (.git/worktrees/<x>/modules/<name>),
// which goes with the tree. A HEAD the main repository's .git/modules/<path>
// has, or on a remote-tracking branch (pushed), is safe.
func (c *Core) LocalOnlySubmodules(ctx context.Context, tree string) []string {
	if _, err := os.Stat(filepath.Join(tree, ".gitmodules")); err != nil {
		return nil // no submodules (and no git call for it)
	}
	paths, err := c.Repo.SubmodulePaths(ctx, tree)
	if err != nil {
		return nil
	}
	var local []string
	for _, p := range paths {
		dir := filepath.Join(tree, p)
		if _, err := os.Stat(filepath.Join(dir, ".git")); err != nil {
			continue // not checked out: nothing of its own
		}
		head := gitcore.SubmoduleHead(dir) // from its files: no git runs in it
		if head == "" {
			continue
		}
		if c.Repo.SubmodulePublished(ctx, dir, head) ||
			c.Repo.SubmoduleHas(ctx, filepath.Join(c.Repo.CommonDir, "modules", p), head) {
			continue
		}
		local = append(local, p)
	}
	return local
}

// FirstTime is the first of ps that parses as RFC3339 (zero: none).
func FirstTime(ps ...*string) time.Time {
	for _, p := range ps {
		if p == nil || *p == "" {
			continue
		}
		if t, err := time.Parse(time.RFC3339, *p); err == nil {
			return t
		}
	}
	return time.Time{}
}

// RoundAge is d in days, hours or minutes, rounded down (a gc reason).
func RoundAge(d time.Duration) string {
	if d >= 48*time.Hour {
		return fmt.Sprintf("%dd", int(d.Hours()/24))
	}
	if d >= time.Hour {
		return fmt.Sprintf("%dh", int(d.Hours()))
	}
	return fmt.Sprintf("%dm", int(d.Minutes()))
}

// TmuxWait bounds each tmux call of doctor, gc and a headed agent's
// tmux steps.
const TmuxWait = 5 * time.Second

// ResetFiles makes a tree's files those of commit's tree, with the index
// at HEAD (files the commit added are untracked again): `reset --hard`,
// `clean -fd` (never .agency/, nor what keep names: the untracked files
// checkpoints leave out), `read-tree --reset -u`, `reset`. An empty commit
// means HEAD: the tree ends clean.
func (c *Core) ResetFiles(ctx context.Context, path, commit string, keep []string) error {
	tree := c.Repo.Tree(path)
	steps := []func(context.Context) error{
		tree.ResetHard,
		func(ctx context.Context) error { return tree.Clean(ctx, keep, store.AgencyDir) },
	}
	if commit != "" {
		steps = append(steps, func(ctx context.Context) error { return tree.ReadTreeReset(ctx, commit) }, tree.ResetIndex)
	}

	for _, step := range steps {
		if err := step(ctx); err != nil {
			return GitErr(err)
		}
	}

	return nil
}
