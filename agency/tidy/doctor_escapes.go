package tidy

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/git-agency/git-agency/agency/internal/core"
	"github.com/git-agency/git-agency/store"
	"github.com/git-agency/git-agency/wall"
)

// staleLockAge is how old a ref's .lock file must be for doctor to call
// it stale: git holds one for the moment of an update.
const staleLockAge = time.Minute

// fsckBudget bounds doctor's connectivity check on a large repository.
const fsckBudget = 20 * time.Second

// checkEscapes looks for what an agent that got past the wall would
// leave: stale .lock files among the refs, objects/info/alternates, a
// non-empty config.worktree in a sandbox's git directory, a link (or
// anything but a regular file) in an invocation's logs, and objects the
// refs reach that are missing.
func (a *Tidier) checkEscapes(ctx context.Context, add addFinding, records map[string]*store.InvocationRecord) {
	common := a.Repo.CommonDir
	_ = filepath.WalkDir(filepath.Join(common, "refs"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".lock") {
			if fi, err := d.Info(); err == nil && time.Since(fi.ModTime()) > staleLockAge {
				add("escapes", LevelProblem, "remove it if no git command is running: rm "+p, p, "stale ref lock: it blocks every update of that ref")
			}
		}
		return nil
	})

	if fi, err := os.Stat(filepath.Join(common, "packed-refs.lock")); err == nil && time.Since(fi.ModTime()) > staleLockAge {
		add("escapes", LevelProblem, "remove it if no git command is running", filepath.Join(common, "packed-refs.lock"), "stale packed-refs lock")
	}

	if b, err := os.ReadFile(filepath.Join(common, "objects", "info", "alternates")); err == nil {
		add("escapes", LevelWarn, "keep it only if you made it (git clone --shared, --reference)", filepath.Join(common, "objects", "info", "alternates"),
			"the object store borrows from: %s", strings.Join(strings.Fields(string(b)), ", "))
	}

	// Each sandbox: its config.worktree, and its logs.
	for _, r := range records {
		if r == nil {
			continue
		}

		if r.SandboxPath != "" {
			if gitDir, err := wall.SandboxGitDir(r.SandboxPath, common); err == nil {
				cw := filepath.Join(gitDir, "config.worktree")
				if fi, err := os.Lstat(cw); err == nil && (fi.Size() > 0 || !fi.Mode().IsRegular()) {
					add("escapes", LevelProblem, "look at it, then empty it: git-agency makes it empty for the wall", cw,
						"sandbox %s's config.worktree is not empty: what it sets applies to git in that sandbox", r.InvocationID)
				}
			}
		}

		logs := a.Store.SandboxLogsDir(r.InvocationID)
		entries, _ := os.ReadDir(logs)
		for _, e := range entries {
			if !e.Type().IsRegular() && !e.IsDir() {
				add("escapes", LevelProblem, "remove it: git-agency never writes through it", filepath.Join(logs, e.Name()),
					"invocation %s's log %s is not a regular file (a link?)", r.InvocationID, e.Name())
			}
		}
	}

	fctx, cancel := context.WithTimeout(ctx, fsckBudget)
	defer cancel()

	if out, err := a.Repo.FsckConnectivity(fctx); err != nil && fctx.Err() == nil {
		add("escapes", LevelProblem, "run 'git fsck' to see every missing object", common, "git fsck --connectivity-only failed: %s", core.FirstLine(out))
	}
}
