package gitcore

import (
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/git-agency/git-agency/gitcore/internal/repofiles"
)

// maxHeadFile bounds what is read of a HEAD file (a symbolic ref or an
// object id is far shorter).
const maxHeadFile = 4096

// HeadFromFiles is the commit the tree's HEAD names, read from files as
// git reads them (see headCommit), without running git: "" when it cannot
// tell that way (ask Head). A read that looks at many trees (gc) spares a
// `git rev-parse` per tree.
func (t *Tree) HeadFromFiles() string {
	gitDir, ok := repofiles.WorktreeGitDir(t.Path)
	if !ok {
		return ""
	}
	return t.headCommit(gitDir)
}

// headCommit is the commit the worktree's HEAD (in gitDir) names, read
// from files: detached, or a branch's loose ref or its packed-refs line;
// "" when it cannot tell that way (a symbolic chain, the reftable
// backend, an unborn branch, a git dir that is not our repository's: its
// branches are not ours).
func (t *Tree) headCommit(gitDir string) string {
	if !t.repo.ownsGitDir(gitDir) {
		return ""
	}

	b, ok := readSmallFile(filepath.Join(gitDir, "HEAD"), maxHeadFile)
	if !ok {
		return ""
	}

	s := strings.TrimSpace(string(b))
	ref, symbolic := strings.CutPrefix(s, "ref: ")
	if !symbolic {
		return repofiles.HexOID(s)
	}

	var packed map[string]string
	id, _ := repofiles.Branch(t.repo.CommonDir, ref, &packed)
	return id
}

// ownsGitDir reports whether gitDir is this repository's: its common dir,
// or a linked worktree's registration under <common>/worktrees/ whose
// commondir file names the common dir back. Another repository's git dir
// (a standalone repository, a worktree of another clone) is not.
func (r *Repo) ownsGitDir(gitDir string) bool {
	common := r.CommonDir
	if common == "" {
		return false
	}

	g, c := realDir(gitDir), realDir(common)
	if g == c {
		return true
	}
	if filepath.Dir(g) != filepath.Join(c, "worktrees") {
		return false
	}

	b, err := os.ReadFile(filepath.Join(gitDir, "commondir"))
	if err != nil {
		return false
	}

	back := strings.TrimSpace(string(b))
	if !filepath.IsAbs(back) {
		back = filepath.Join(gitDir, back)
	}

	return realDir(back) == c
}

// realDir is dir absolute, with symlinks resolved when it can be.
func realDir(dir string) string {
	if d, err := filepath.Abs(dir); err == nil {
		dir = d
	}
	if d, err := filepath.EvalSymlinks(dir); err == nil {
		dir = d
	}
	return filepath.Clean(dir)
}

// BranchFromFiles is CurrentBranch read from the tree's HEAD file, as git
// reads it, without running git: the branch's short name, or "" for a
// detached HEAD. ok is false when it cannot tell that way (ask
// CurrentBranch): a git dir that is not our repository's, the reftable
// backend, a HEAD that is neither a commit id nor a branch, or a short
// name git would spell otherwise because a ref it looks at first has the
// same name (`symbolic-ref --short` then says heads/<name>).
func (t *Tree) BranchFromFiles() (branch string, ok bool) {
	gitDir, found := repofiles.WorktreeGitDir(t.Path)
	common := t.repo.CommonDir
	if !found || common == "" || !t.repo.ownsGitDir(gitDir) {
		return "", false
	}
	if _, err := os.Lstat(filepath.Join(common, "reftable")); !os.IsNotExist(err) {
		return "", false
	}

	b, readable := readSmallFile(filepath.Join(gitDir, "HEAD"), maxHeadFile)
	if !readable {
		return "", false
	}

	s := strings.TrimSpace(string(b))
	ref, symbolic := strings.CutPrefix(s, "ref: ")
	if !symbolic {
		return "", repofiles.HexOID(s) != ""
	}

	name, isBranch := strings.CutPrefix(ref, "refs/heads/")
	if !isBranch || name == "" || strings.Contains(name, "..") {
		return "", false
	}
	if refShadowed(gitDir, common, name) {
		return "", false
	}

	return name, true
}

// refShadowed reports whether name, as a short ref name, also names a ref
// git resolves before refs/heads/<name> (<name> itself in the git dirs,
// refs/<name>, refs/tags/<name>), as a loose file or a packed-refs line,
// or when packed-refs cannot be read.
func refShadowed(gitDir, common, name string) bool {
	shadows := []string{name, "refs/" + name, "refs/tags/" + name}
	for _, r := range shadows {
		for _, dir := range []string{gitDir, common} {
			if _, err := os.Lstat(filepath.Join(dir, filepath.FromSlash(r))); !os.IsNotExist(err) {
				return true
			}
		}
	}

	packed, err := os.ReadFile(filepath.Join(common, "packed-refs"))
	if os.IsNotExist(err) {
		return false
	}
	if err != nil {
		return true
	}

	for _, line := range strings.Split(string(packed), "\n") {
		if _, ref, ok := strings.Cut(line, " "); ok && slices.Contains(shadows, ref) {
			return true
		}
	}

	return false
}

// BranchExistsFromFiles is BranchExists read from files, without running
// git: the branch's loose ref file, else its packed-refs line. ok is
// false when it cannot tell that way (no common dir, the reftable
// backend, a file it cannot read).
func (r *Repo) BranchExistsFromFiles(name string) (exists, ok bool) {
	common := r.CommonDir
	if common == "" || name == "" || strings.Contains(name, "..") {
		return false, false
	}
	if _, err := os.Lstat(filepath.Join(common, "reftable")); !os.IsNotExist(err) {
		return false, false
	}

	ref := "refs/heads/" + name
	fi, err := os.Lstat(filepath.Join(common, filepath.FromSlash(ref)))
	switch {
	case err == nil && fi.Mode().IsRegular():
		return true, true
	case err != nil && !os.IsNotExist(err):
		return false, false
	}

	packed, err := os.ReadFile(filepath.Join(common, "packed-refs"))
	if os.IsNotExist(err) {
		return false, true
	}
	if err != nil {
		return false, false
	}

	for _, line := range strings.Split(string(packed), "\n") {
		if _, n, found := strings.Cut(line, " "); found && n == ref {
			return true, true
		}
	}

	return false, true
}
