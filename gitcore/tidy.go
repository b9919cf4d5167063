package gitcore

import (
	"context"
	"os"
	"path/filepath"
	"strings"
)

// ReachableFromOtherBranch reports whether commit is reachable from some
// local branch other than except (a full ref name, "" for none).
func (r *Repo) ReachableFromOtherBranch(ctx context.Context, commit, except string) (bool, error) {
	args := []string{"rev-list", "-n1", commit, "--not"}
	if except != "" {
		// --exclude before --branches matches names without refs/heads/.
		args = append(args, "--exclude="+strings.TrimPrefix(except, "refs/heads/"))
	}
	args = append(args, "--branches")
	out, err := r.query(ctx, args...)
	if err != nil {
		return false, err
	}
	return strings.TrimSpace(string(out)) == "", nil
}

// UnpickedCommits counts the commits of upstream..head whose change is not
// already in upstream (by patch id, as `git cherry` does): a cherry-picked
// commit counts as merged.
func (r *Repo) UnpickedCommits(ctx context.Context, upstream, head string) (int, error) {
	out, err := r.query(ctx, "cherry", upstream, head)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, l := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(l, "+") {
			n++
		}
	}
	return n, nil
}

// AdminWorktree is one registration under <common dir>/worktrees/.
type AdminWorktree struct {
	AdminDir string // <common>/worktrees/<name>
	Path     string // the worktree directory it points at
	Locked   bool
}

// AdminWorktrees lists git's worktree registrations from the common git
// directory (so a registration whose directory vanished is seen too).
func (r *Repo) AdminWorktrees() ([]AdminWorktree, error) {
	root := filepath.Join(r.CommonDir, "worktrees")
	ents, err := os.ReadDir(root)
	if err != nil {
		if os.IsNotExist(err) {
			return nil, nil
		}
		return nil, err
	}
	var out []AdminWorktree
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		dir := filepath.Join(root, e.Name())
		b, err := os.ReadFile(filepath.Join(dir, "gitdir"))
		if err != nil {
			continue
		}
		gitfile := strings.TrimSpace(string(b))
		w := AdminWorktree{AdminDir: dir, Path: filepath.Dir(gitfile)}
		if _, err := os.Stat(filepath.Join(dir, "locked")); err == nil {
			w.Locked = true
		}
		out = append(out, w)
	}
	return out, nil
}

// Version of git, for doctor.
func (r *Repo) GitVersion(ctx context.Context) (string, error) { return Version(ctx, r.runner) }
