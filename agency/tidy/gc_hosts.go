package tidy

import (
	"github.com/git-agency/git-agency/agency/land"
	"github.com/git-agency/git-agency/gitcore"
	"github.com/git-agency/git-agency/store"
)

// gc and the agents on hosts: what was fetched here of a run its host
// discarded (its sandbox branch, checkpoint refs and the commit of its
// uncommitted work) are copies; the host keeps its own until its gc (the
// local gc runs that too: agency.App.GCOnHost). The copies go at the next gc, whatever
// their age and without --force, unless the branch is checked out.

// planHostCopies: the fetched refs of a discarded run of a host.
func (p *gcPlanner) planHostCopies(r *store.InvocationRecord, branches map[string]bool, snapshots []gitcore.Ref) {
	why := "fetched from host " + r.Host + ", discarded there"
	branch := store.SandboxBranch(r.InvocationID)
	if branches["refs/heads/"+branch] {
		it := GCItem{Kind: GCBranch, Invocation: r.InvocationID, Target: branch, Reason: why}
		if at := p.checkedOutAt(branch); at != "" {
			it.Kept, it.KeptWhy = true, "checked out in "+at
		}
		p.add(it)
	}

	for _, ref := range snapshots {
		p.add(GCItem{Kind: GCSnapshotRef, Invocation: r.InvocationID, Target: ref.Name, Reason: why})
	}

	if _, err := p.a.Repo.RevParse(p.ctx, land.HostApplyRef(r.InvocationID)); err == nil {
		p.add(GCItem{Kind: GCSnapshotRef, Invocation: r.InvocationID, Target: land.HostApplyRef(r.InvocationID), Reason: why})
	}
}

// hostCopy: r is a run of a host discarded there (its refs here are
// copies).
func hostCopy(r *store.InvocationRecord) bool {
	return r.Host != "" && store.Deref(r.LandingStatus) == store.LandingDiscarded
}
