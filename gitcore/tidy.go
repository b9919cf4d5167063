package gitcore

import (
	"context"
	"os"
	"path/filepath"
	"strings"

	"github.com/git-agency/git-agency/errs"
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

// Gitlink is a submodule entry (mode 160000) that a change sets: Path now
// points at Commit.
type Gitlink struct {
	Path   string
	Commit string
}

// GitlinkChanges lists the submodule entries that differ between two
// commits or trees, with the commit each points at in `to` (a removed one
// is not listed).
func (r *Repo) GitlinkChanges(ctx context.Context, from, to string) ([]Gitlink, error) {
	out, err := r.query(ctx, "diff-tree", "-r", "-z", "--no-renames", "--raw", from, to)
	if err != nil {
		return nil, err
	}

	// -z --raw: ":<old mode> <new mode> <old sha> <new sha> <status>\0<path>\0"
	f := splitZ(out)
	var links []Gitlink
	for i := 0; i+1 < len(f); i += 2 {
		meta := strings.Fields(strings.TrimPrefix(f[i], ":"))
		if len(meta) == 5 && meta[1] == "160000" && meta[4] != "D" {
			links = append(links, Gitlink{Path: f[i+1], Commit: meta[3]})
		}
	}

	return links, nil
}

// SubmodulePaths lists the submodules (gitlinks) in the index of the tree
// at dir, by path.
func (r *Repo) SubmodulePaths(ctx context.Context, dir string) ([]string, error) {
	out, err := r.Tree(dir).query(ctx, "ls-files", "-s", "-z")
	if err != nil {
		return nil, err
	}

	// "<mode> <sha> <stage>\t<path>\0"
	var paths []string
	for _, e := range splitZ(out) {
		if meta, path, ok := strings.Cut(e, "\t"); ok && strings.HasPrefix(meta, "160000 ") {
			paths = append(paths, path)
		}
	}

	return paths, nil
}

// KeepSubmoduleHead fetches the HEAD of the submodule checked out at dir
// into this repository as ref, so the commit outlives the submodule's own
// repository.
func (r *Repo) KeepSubmoduleHead(ctx context.Context, dir, ref string) error {
	_, err := r.run(ctx, "-c", "protocol.file.allow=always", "fetch", "-q", "--no-tags", "--no-write-fetch-head", dir, "HEAD:"+ref)
	return err
}

// SubmoduleHas reports whether the repository of the submodule checked out
// at dir (a populated submodule's directory, or its git directory under
// .git/modules) holds commit. It is false when dir is not a repository of
// its own.
func (r *Repo) SubmoduleHas(ctx context.Context, dir, commit string) bool {
	if _, err := os.Stat(filepath.Join(dir, ".git")); err != nil {
		if _, err := os.Stat(filepath.Join(dir, "HEAD")); err != nil {
			return false // neither a checked-out submodule nor a git directory
		}
		_, err := r.Tree(dir).query(ctx, "--git-dir="+dir, "cat-file", "-e", commit+"^{commit}")
		return err == nil
	}
	_, err := r.Tree(dir).query(ctx, "cat-file", "-e", commit+"^{commit}")
	return err == nil
}

// DirtySubmodules lists, from a status of the tree (Tree.Status: as
// --ignore-submodules=none would show them), the submodules with changed or untracked files inside
// them: work no snapshot of the superproject can hold (it records only the
// commit checked out in a submodule), that goes with the tree.
func DirtySubmodules(st []StatusEntry) []string {
	var paths []string
	for _, e := range st {
		if len(e.Sub) == 4 && e.Sub[0] == 'S' && (e.Sub[2] == 'M' || e.Sub[3] == 'U') {
			paths = append(paths, e.Path)
		}
	}
	return paths
}

// OnlySubmoduleDirt reports whether a status entry is a submodule whose
// only change is the files inside it: its commit and its index entry are
// as HEAD has them, so there is nothing of it to snapshot or land.
func OnlySubmoduleDirt(e StatusEntry) bool {
	return len(e.Sub) == 4 && e.Sub[0] == 'S' && e.Sub[1] == '.' && len(e.XY) == 2 && e.XY[0] == '.'
}

// RemoveRegistration deletes git's registration directory admin of a
// linked worktree, <common>/worktrees/<name>, as `git worktree remove
// --force --force` does (even when locked): the caller removed its tree.
// It refuses any other directory.
func (r *Repo) RemoveRegistration(admin string) error {
	root := filepath.Join(r.CommonDir, "worktrees")
	name := filepath.Base(filepath.Clean(admin))
	if r.CommonDir == "" || realDir(filepath.Dir(filepath.Clean(admin))) != realDir(root) || name == "." || name == ".." || name == string(filepath.Separator) {
		return errs.UnsafePath(admin, root)
	}
	if err := os.RemoveAll(filepath.Join(root, name)); err != nil {
		return errs.IO("remove", admin, err)
	}
	return nil
}
