package gitcore

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/git-agency/git-agency/gitcore/internal/configfile"
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
//   - core.bare or core.worktree in the repository's configuration, a
//     repository format other than 0 and 1, an extension not listed in
//     knownExtensions.
func discoverFromFiles(r CommandRunner, dir string) (*Repo, bool) {
	for _, k := range []string{"GIT_DIR", "GIT_WORK_TREE", "GIT_COMMON_DIR", "GIT_OBJECT_DIRECTORY",
		"GIT_CEILING_DIRECTORIES", "GIT_DISCOVERY_ACROSS_FILESYSTEM"} {
		if _, set := os.LookupEnv(k); set {
			return nil, false
		}
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, false
	}
	start, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, false
	}
	dev, ok := deviceOf(start)
	if !ok {
		return nil, false
	}
	for d := start; ; d = filepath.Dir(d) {
		if d != start {
			if dv, ok := deviceOf(d); !ok || dv != dev {
				return nil, false
			}
		}
		gitDir, gitFile, found, ok := dotGitAt(d)
		if !ok {
			return nil, false
		}
		if found {
			return repoFromFiles(r, d, gitDir, gitFile)
		}
		if holdsHead(d) || d == filepath.Dir(d) {
			return nil, false
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
	common, ok := commonDirOf(real)
	if !ok || !isGitDir(real, common) {
		return "", "", false, false
	}
	return real, p, true, true
}

// commonDirOf is the common directory of the git directory gitDir: what
// its commondir file names (relative to gitDir), else gitDir itself;
// symlinks resolved.
func commonDirOf(gitDir string) (string, bool) {
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
	return hexOID(head) != ""
}

// knownExtensions are the repository extensions discovery from files
// accepts: none changes where the repository, its tree or its
// configuration are.
var knownExtensions = map[string]bool{
	"extensions.objectformat": true, "extensions.worktreeconfig": true, "extensions.noop": true,
	"extensions.partialclone": true, "extensions.preciousobjects": true,
}

// repoFromFiles is the Repo whose tree is top and git directory gitDir
// (gitFile: the gitfile that named it, "" for a .git directory), when its
// owners and configuration let files say what git would.
func repoFromFiles(r CommandRunner, top, gitDir, gitFile string) (*Repo, bool) {
	common, ok := commonDirOf(gitDir)
	if !ok {
		return nil, false
	}
	for _, p := range []string{top, gitFile, gitDir} {
		if p != "" && !ownedByUs(p) {
			return nil, false
		}
	}
	if entries, ok := configfile.RepoFiles(gitDir, common); !ok || !plainRepoConfig(entries) {
		return nil, false
	}
	return &Repo{runner: r, GitDir: gitDir, CommonDir: common, Toplevel: top, tips: &tipsMemo{}, fromFiles: true}, true
}

// plainRepoConfig reports whether the repository's own configuration
// leaves its tree where discovery from files finds it: no core.worktree,
// not bare, format 0 or 1, only extensions it knows.
func plainRepoConfig(entries []ConfigEntry) bool {
	for _, e := range entries {
		switch {
		case e.Key == "core.worktree":
			return false
		case e.Key == "core.bare":
			if bare, ok := configfile.Bool(e.Value); !ok || bare || e.Value == "" {
				return false
			}
		case e.Key == "core.repositoryformatversion":
			if e.Value != "0" && e.Value != "1" {
				return false
			}
		case strings.HasPrefix(e.Key, "extensions.") && !knownExtensions[e.Key]:
			return false
		case e.Key == "extensions.objectformat" && e.Value != "sha1" && e.Value != "sha256":
			return false
		}
	}
	return true
}
