package tidy

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/git-agency/git-agency/agency/internal/core"
	"github.com/git-agency/git-agency/store"
)

// oplog reads the operation log, folded.
func (a *Tidier) oplog() (*store.Oplog, error) {
	lines, err := a.Store.ReadOplog()
	if err != nil {
		return nil, err
	}
	return store.FoldOplog(lines), nil
}

// planUndoRefs lists the refs/agency/undo/<seq> refs gc removes: those of
// operations older than cutoff (undo keeps them until then), and those no
// operation names (a worktree rm killed before it logged itself).
func (a *Tidier) planUndoRefs(ctx context.Context, cutoff time.Time) []GCItem {
	refs, err := a.Repo.ForEachRef(ctx, store.UndoRefPrefix)
	if err != nil || len(refs) == 0 {
		return nil
	}

	log, err := a.oplog()
	if err != nil {
		return nil
	}

	var out []GCItem
	for _, r := range refs {
		seq, _ := strconv.Atoi(strings.TrimPrefix(r.Name, store.UndoRefPrefix))
		it := GCItem{Kind: GCUndoRef, Target: r.Name}
		e := log.Entry(seq)
		if e == nil || e.Restore == nil || e.Restore.Ref != r.Name {
			it.Reason, it.Orphan = "no operation of the log needs it", true
			out = append(out, it)
			continue
		}

		when := core.FirstTime(&e.Time)
		if when.IsZero() || when.After(cutoff) {
			continue
		}

		it.Reason = fmt.Sprintf("%s %s ago (undo can no longer restore its uncommitted changes)", a.Host.Describe(e.Operation), core.RoundAge(a.Now().Sub(when)))
		out = append(out, it)
	}

	return out
}

// undoRefNeeded tells whether an operation of the log names ref (gc looks
// again under the lock before it removes one it found orphaned).
func (a *Tidier) undoRefNeeded(ref string) bool {
	log, err := a.oplog()
	if err != nil {
		return true
	}

	for _, e := range log.Entries {
		if e.Restore != nil && e.Restore.Ref == ref {
			return true
		}
	}

	return false
}
