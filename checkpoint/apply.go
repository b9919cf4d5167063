package checkpoint

import (
	"context"
	"errors"

	"github.com/git-agency/git-agency/errs"
	"github.com/git-agency/git-agency/gitcore"
	"github.com/git-agency/git-agency/store"
)

// FromConfig are the options of a checkpoint of invocation inv's sandbox
// tree at path under the repository's configuration cfg: the extra
// denylist and what checkpoints leave out. A bad
// agency.checkpoint.maxFileSize is returned as err, with the default
// standing in for it in the options (agent start refuses it up front).
func FromConfig(repo *gitcore.Repo, st *store.Store, cfg *gitcore.Config, inv, path string, includeUntracked bool, reason string) (Options, error) {
	leaveOut, maxSize, err := LeaveOutFromConfig(cfg)
	if err != nil {
		maxSize = DefaultMaxFileSize
	}

	return Options{
		Repo:             repo,
		Store:            st,
		Invocation:       inv,
		SandboxPath:      path,
		IncludeUntracked: includeUntracked,
		Denylist:         DenylistFromConfig(cfg),
		LeaveOut:         leaveOut,
		MaxFileSize:      maxSize,
		Reason:           reason,
	}, err
}

// Latest is the highest checkpoint number of inv whose ref exists (0 when
// there is none).
func Latest(ctx context.Context, repo *gitcore.Repo, inv string) (int, error) {
	refs, err := repo.ForEachRef(ctx, store.SnapshotRefPrefix(inv))
	if err != nil {
		return 0, err
	}
	max := 0
	for _, r := range refs {
		if n, ok := store.SnapshotRefNumber(inv, r.Name); ok && n > max {
			max = n
		}
	}
	return max, nil
}

// Find is checkpoint n of inv (id as the user wrote it), with its commit:
// E_NOT_FOUND when its ref does not exist (CheckpointGone when
// checkpoints.json still records it).
func Find(ctx context.Context, repo *gitcore.Repo, st *store.Store, inv string, n int, id string) (store.Checkpoint, error) {
	ref := store.SnapshotRef(inv, n)
	commit, err := repo.RevParse(ctx, ref)
	if err != nil {
		if f, ferr := st.ReadCheckpoints(inv); ferr == nil {
			for _, c := range f.Checkpoints {
				if c.ID == n {
					return store.Checkpoint{}, errs.CheckpointGone(inv, id)
				}
			}
		}

		return store.Checkpoint{}, errs.CheckpointNotFound(inv, id)
	}

	found := store.Checkpoint{ID: n, SnapshotRef: ref, SnapshotCommit: commit}
	if list, err := List(ctx, repo, st, inv); err == nil {
		for _, c := range list {
			if c.ID == n {
				found = c
				found.SnapshotCommit = commit
			}
		}
	}

	return found, nil
}

// StagedAndChanged are the paths of status whose staged content differs
// from both HEAD and their file: a checkpoint saves the files, not the
// index, so an apply would lose that staged content for good.
func StagedAndChanged(status []gitcore.StatusEntry) []string {
	var both []string
	for _, e := range status {
		if (e.Kind == gitcore.StatusChanged || e.Kind == gitcore.StatusRenamed) && len(e.XY) == 2 && e.XY[0] != '.' && e.XY[1] != '.' {
			both = append(both, e.Path)
		}
	}
	return both
}

// BeforeApply saves the sandbox as it is before an apply replaces its
// files (o, untracked files included) and says what the apply must keep:
// undo is the checkpoint holding that state (taken now when taken, else
// the latest, equal to it; 0 when there is nothing uncommitted and no
// checkpoint yet), keep the gitignore patterns of the untracked files
// checkpoints leave out (in no checkpoint, the undo one included, so the
// rollback leaves them where they are).
func BeforeApply(ctx context.Context, o Options, status []gitcore.StatusEntry) (undo int, taken bool, keep []string, err error) {
	keep = LeftOutPatterns(o, status)

	// Untracked files are part of what the rollback replaces: with tracked-
	// only checkpoints they would be lost, so save them too.
	o.IncludeUntracked = true
	cp, err := Take(ctx, o)
	if err != nil {
		var e *errs.Error
		if errors.As(err, &e) && e.Code == errs.EDenylisted {
			return 0, false, nil, errs.CheckpointApplyDenylisted(e.Detail)
		}
		return 0, false, nil, err
	}

	if cp != nil {
		return cp.ID, true, keep, nil
	}

	undo, err = Latest(ctx, o.Repo, o.Invocation)
	return undo, false, keep, err
}
