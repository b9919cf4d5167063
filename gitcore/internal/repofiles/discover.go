// Package repofiles reads where a repository is and what its refs say
// from git's own files (.git, gitfiles, commondir, HEAD, loose refs,
// packed-refs), for the commands that would otherwise start a `git
// rev-parse` or `git for-each-ref`. Whatever it does not read exactly as
// git does is left to git (ok false).
package repofiles

import (
	"os"
	"path/filepath"
	"strings"
)

// Finding the repository from its files spares every command its `git
// rev-parse`. It follows git's discovery where it is plain: from the
// directory (symlinks resolved, as git's getcwd gives it) up to the first
// directory holding .git, a git directory or a gitfile ("gitdir: …",
// relative to the directory holding it) naming one, whose common
// directory is its commondir file's, else itself. Anything else is left
// to git (ok false), so what git would say never depends on this path:
//   - what git was told (GIT_DIR, GIT_WORK_TREE, GIT_COMMON_DIR,
//     GIT_OBJECT_DIRECTORY, GIT_CEILING_DIRECTORIES,
//     GIT_DISCOVERY_ACROSS_FILESYSTEM);
//   - a walk that crosses a filesystem (git stops there), a directory
//     that may be a git directory itself (a bare repository, the inside
//     of .git, a linked worktree's git directory: any holding HEAD), a
//     .git that is neither a directory nor a file, a gitfile or git
//     directory git would reject;
//   - a repository, tree or gitfile owned by someone else (git's
//     safe.directory check decides);
//   - (for the caller) core.bare or core.worktree in the repository's
//     configuration, a repository format other than 0 and 1.
//
// Find returns the tree's top directory, its git directory and the
// gitfile that named it ("" for a .git directory).
func Find(dir string) (top, gitDir, gitFile string, ok bool) {
	for _, k := range []string{"GIT_DIR", "GIT_WORK_TREE", "GIT_COMMON_DIR", "GIT_OBJECT_DIRECTORY",
		"GIT_CEILING_DIRECTORIES", "GIT_DISCOVERY_ACROSS_FILESYSTEM"} {
		if _, set := os.LookupEnv(k); set {
			return "", "", "", false
		}
	}

	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", "", "", false
	}

	start, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", "", "", false
	}

	dev, ok := deviceOf(start)
	if !ok {
		return "", "", "", false
	}

	for d := start; ; d = filepath.Dir(d) {
		if d != start {
			if dv, ok := deviceOf(d); !ok || dv != dev {
				return "", "", "", false
			}
		}

		gitDir, gitFile, found, ok := dotGitAt(d)
		if !ok {
			return "", "", "", false
		}
		if found {
			return d, gitDir, gitFile, true
		}
		if holdsHead(d) || d == filepath.Dir(d) {
			return "", "", "", false
		}
	}
}

// dotGitAt looks at dir/.git: found when it is a git directory, or a
// gitfile (then gitFile is its path) naming one (gitDir, symlinks
// resolved); ok is false for anything git would treat otherwise.
func dotGitAt(dir string) (gitDir, gitFile string, found, ok bool) {
	p := filepath.Join(dir, ".git")
	fi, err := os.Lstat(p)
	switch {
	case os.IsNotExist(err):
		return "", "", false, true
	case err != nil:
		return "", "", false, false
	case fi.IsDir():
		return p, "", true, isGitDir(p, p)
	case !fi.Mode().IsRegular() || fi.Size() > 4096:
		return "", "", false, false
	}

	b, err := os.ReadFile(p)
	if err != nil {
		return "", "", false, false
	}

	target, ok := strings.CutPrefix(strings.TrimRight(string(b), "\r\n"), "gitdir: ")
	if !ok || target == "" || strings.ContainsAny(target, "\n\x00") {
		return "", "", false, false
	}

	real, err := filepath.EvalSymlinks(physicalJoin(dir, target))
	if err != nil {
		return "", "", false, false
	}

	common, ok := CommonDirOf(real)
	if !ok || !isGitDir(real, common) {
		return "", "", false, false
	}

	return real, p, true, true
}

// CommonDirOf is the common directory of the git directory gitDir: what
// its commondir file names (relative to gitDir), else gitDir itself;
// symlinks resolved.
func CommonDirOf(gitDir string) (string, bool) {
	b, err := os.ReadFile(filepath.Join(gitDir, "commondir"))
	if os.IsNotExist(err) {
		return gitDir, true
	}
	if err != nil {
		return "", false
	}

	c := strings.TrimRight(string(b), "\r\n")
	if c == "" || strings.ContainsAny(c, "\n\x00") {
		return "", false
	}

	real, err := filepath.EvalSymlinks(physicalJoin(gitDir, c))
	if err != nil {
		return "", false
	}

	return filepath.Clean(real), true
}

// physicalJoin is p (a gitfile's or commondir's path) relative to dir
// unless absolute, without the lexical cleaning of filepath.Join: git
// takes a ".." after a symlink from where the link led (as
// filepath.EvalSymlinks does), not by dropping the link's name.
func physicalJoin(dir, p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return dir + string(filepath.Separator) + p
}

// holdsHead reports whether dir has an entry named HEAD: it may be a git
// directory (git's is_git_directory also reads its commondir file, and
// takes HEAD contents this reader does not), where git's discovery stops
// and this one leaves the answer to git.
func holdsHead(dir string) bool {
	_, err := os.Lstat(filepath.Join(dir, "HEAD"))
	return err == nil
}

// isGitDir is git's is_git_directory for the git directory gitDir whose
// common directory is common: HEAD a branch ("ref: refs/…") or a commit
// id, objects and refs directories in common.
func isGitDir(gitDir, common string) bool {
	for _, d := range []string{"objects", "refs"} {
		if fi, err := os.Stat(filepath.Join(common, d)); err != nil || !fi.IsDir() {
			return false
		}
	}

	fi, err := os.Lstat(filepath.Join(gitDir, "HEAD"))
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > 4096 {
		return false
	}

	b, err := os.ReadFile(filepath.Join(gitDir, "HEAD"))
	if err != nil {
		return false
	}

	head := strings.TrimRight(string(b), "\n")
	if ref, ok := strings.CutPrefix(head, "ref:"); ok {
		return strings.HasPrefix(strings.TrimLeft(ref, " \t"), "refs/")
	}

	return HexOID(head) != ""
}
