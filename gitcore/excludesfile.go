package gitcore

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/git-agency/git-agency/gitcore/internal/configfile"
)

// excludesFileWait bounds the one `git config` call excludesFile may make.
const excludesFileWait = 5 * time.Second

// excludesFile is the excludes file git's status reads besides each
// .gitignore and info/exclude: core.excludesFile as the repository's own
// configuration sees it (system, global, its config file), else
// $XDG_CONFIG_HOME/git/ignore (or ~/.config/git/ignore). A submodule's
// own configuration is not read: an agent can write it, and it could
// only hide its own untracked files. "" when none can be named.
func (r *Repo) excludesFile() string {
	if r != nil && r.CommonDir != "" {
		if all, ok := configfile.Files(r.CommonDir, r.CommonDir); ok {
			return excludesFrom(all)
		}
		ctx, cancel := context.WithTimeout(context.Background(), excludesFileWait)
		defer cancel()
		if out, err := r.query(ctx, "config", "--type=path", "--get", "core.excludesFile"); err == nil {
			if p := strings.TrimSuffix(string(out), "\n"); p != "" {
				return p
			}
		}
	}

	return defaultExcludesFile()
}

// excludesFrom is excludesFile read from configuration entries: the last
// core.excludesFile, with a leading ~/ made the home directory, as
// `git config --type=path` does.
func excludesFrom(all []configfile.Entry) string {
	v := ""
	for _, e := range all {
		if e.Key == "core.excludesfile" {
			v = e.Value
		}
	}

	switch {
	case v == "":
		return defaultExcludesFile()
	case strings.HasPrefix(v, "~/"):
		if h := os.Getenv("HOME"); h != "" {
			return filepath.Join(h, v[2:])
		}
		return ""
	case filepath.IsAbs(v):
		return v
	}

	// ~user/ and a relative path are git's to resolve: its answer is
	// not guessed.
	return ""
}

// defaultExcludesFile is git's excludes file when core.excludesFile is
// not set.
func defaultExcludesFile() string {
	if x := os.Getenv("XDG_CONFIG_HOME"); x != "" {
		return filepath.Join(x, "git", "ignore")
	}
	if h := os.Getenv("HOME"); h != "" {
		return filepath.Join(h, ".config", "git", "ignore")
	}
	return ""
}
