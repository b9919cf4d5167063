package agency

import (
	"context"
	"os"

	"github.com/git-agency/git-agency/store"
)

// Relink is what Open did for a repository that was moved or renamed since
// its records were made (store.Open found them under its old id).
type Relink struct {
	From string // the old common git directory
	// Repaired are the trees whose link to the repository `git worktree
	// repair` restored.
	Repaired []string
	// Err is set when the relink failed: the next command tries again.
	Err error
}

// relink points the records at the repository's new place: `git worktree
// repair` of every integration and sandbox tree that exists (their .git
// files still name the old git directory), then repo.json's common_dir.
// On failure repo.json keeps the old path, so the next command retries.
func (a *App) relink(ctx context.Context) *Relink {
	r := &Relink{From: a.Store.MovedFrom}
	ctx, unlock, err := a.lockWork(ctx)
	if err != nil {
		r.Err = err
		return r
	}
	defer unlock()
	var trees []string
	if wts, err := a.Store.ScanWorktrees(); err == nil {
		for _, e := range wts {
			if e.Record != nil && e.Record.State == store.StatePresent && exists(e.Record.TreePath) {
				trees = append(trees, e.Record.TreePath)
			}
		}
	}

	if invs, err := a.Store.ScanInvocations(); err == nil {
		for _, e := range invs {
			if e.Record != nil && e.Record.SandboxPath != "" && exists(e.Record.SandboxPath) {
				trees = append(trees, e.Record.SandboxPath)
			}
		}
	}

	if err := a.Repo.WorktreeRepair(ctx, trees); err != nil {
		r.Err = gitErr(err)
		return r
	}

	if err := a.Store.Relink(a.Repo.CommonDir); err != nil {
		r.Err = err
		return r
	}

	r.Repaired = trees
	return r
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
