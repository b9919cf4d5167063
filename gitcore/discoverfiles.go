package gitcore

import (
	"strings"

	"github.com/git-agency/git-agency/gitcore/internal/configfile"
	"github.com/git-agency/git-agency/gitcore/internal/repofiles"
)

// discoverFromFiles is the repository found from its files
// (repofiles.Find), when its owners and configuration let files say what
// git would: else ok is false and git is asked.
func discoverFromFiles(r CommandRunner, dir string) (*Repo, bool) {
	top, gitDir, gitFile, ok := repofiles.Find(dir)
	if !ok {
		return nil, false
	}
	return repoFromFiles(r, top, gitDir, gitFile)
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
	common, ok := repofiles.CommonDirOf(gitDir)
	if !ok {
		return nil, false
	}

	for _, p := range []string{top, gitFile, gitDir} {
		if p != "" && !repofiles.OwnedByUs(p) {
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
