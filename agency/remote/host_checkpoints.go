package remote

import (
	"context"
	"sort"
	"time"

	"github.com/git-agency/git-agency/agency/internal/core"
	"github.com/git-agency/git-agency/store"
)

// FetchedCheckpoints are the checkpoints of an invocation on a host as
// fetched here (refs/agency/snapshots/<id>/<n>), for when its host does
// not answer: number, time, the snapshot and the HEAD of the time; the
// reason and diffstat stay on the host.
func (a *Remote) FetchedCheckpoints(ctx context.Context, rec *store.InvocationRecord) ([]store.Checkpoint, error) {
	refs, err := a.Repo.ForEachRef(ctx, store.SnapshotRefPrefix(rec.InvocationID))
	if err != nil {
		return nil, core.GitErr(err)
	}

	var out []store.Checkpoint
	for _, r := range refs {
		n, ok := store.SnapshotRefNumber(rec.InvocationID, r.Name)
		if !ok {
			continue
		}

		cp := store.Checkpoint{ID: n, SnapshotRef: r.Name, SnapshotCommit: r.Object}
		if info, err := a.Repo.Commit(ctx, r.Object); err == nil {
			cp.CreatedAt = info.Committed.UTC().Format(time.RFC3339)
			if len(info.Parents) > 0 {
				cp.HeadSHA = info.Parents[0]
			}
		}

		out = append(out, cp)
	}

	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}
