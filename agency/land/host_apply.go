package land

import (
	"context"
	"strings"

	"github.com/git-agency/git-agency/gitcore"
	"github.com/git-agency/git-agency/store"
)

// HostApplyRef is where a host keeps the commit of an invocation's
// uncommitted work for a land --apply (host-serve apply), and where this
// side fetches it to.
func HostApplyRef(id string) string { return "refs/agency/apply/" + id }

// hostApplied: with apply, for an invocation on a host (no sandbox tree
// here), adds to w the fetched commit of its uncommitted work when it
// sits on tip (the sandbox branch's fetched tip), what a local land
// --apply snapshots; it reports whether rec is such an invocation.
func (a *Lander) hostApplied(ctx context.Context, rec *store.InvocationRecord, w *Work, tip, tree string, apply bool) bool {
	if tree != "" || rec.Host == "" || !apply {
		return false
	}
	c, err := a.Repo.RevParse(ctx, HostApplyRef(rec.InvocationID))
	if err != nil || c == "" {
		return true
	}
	info, err := a.Repo.Commit(ctx, c)
	if err != nil || len(info.Parents) != 1 || info.Parents[0] != tip {
		return true
	}
	msg := "agency: land invocation " + rec.InvocationID + "\n"
	w.Commits = append(w.Commits, gitcore.Commit{ID: c, Parents: []string{tip}, Tree: info.Tree, Subject: strings.TrimSpace(msg), Message: msg})
	w.Dirty, w.Applied = true, true
	return true
}
