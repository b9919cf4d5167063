package agency

import (
	"context"
	"sort"

	"github.com/git-agency/git-agency/gitcore"
	"github.com/git-agency/git-agency/store"
)

// gc and the agents on hosts: what was fetched here of a run its host
// discarded (its sandbox branch, checkpoint refs and the commit of its
// uncommitted work) are copies; the host keeps its own until its gc (the
// local gc runs that too: GCHosts). The copies go at the next gc, whatever
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
	if _, err := p.a.Repo.RevParse(p.ctx, HostApplyRef(r.InvocationID)); err == nil {
		p.add(GCItem{Kind: GCSnapshotRef, Invocation: r.InvocationID, Target: HostApplyRef(r.InvocationID), Reason: why})
	}
}

// hostCopy: r is a run of a host discarded there (its refs here are
// copies).
func hostCopy(r *store.InvocationRecord) bool {
	return r.Host != "" && store.Deref(r.LandingStatus) == store.LandingDiscarded
}

// RecordHosts are the hosts this repository's records name, sorted: where
// `gc` runs too.
func (a *App) RecordHosts() []string {
	seen := map[string]bool{}
	list, err := a.Store.ScanInvocations()
	if err != nil {
		return nil
	}
	for _, e := range list {
		if e.Record != nil && e.Record.Host != "" {
			seen[e.Record.Host] = true
		}
	}
	out := make([]string, 0, len(seen))
	for h := range seen {
		out = append(out, h)
	}
	sort.Strings(out)
	return out
}

// gcHostArgs are the gc flags a host's gc gets: the same choices.
func gcHostArgs(opts GCOptions, act bool, olderThan string) []string {
	args := []string{"gc", "--older-than", olderThan}
	if act {
		args = append(args, "--yes")
	} else {
		args = append(args, "--dry-run")
	}
	if opts.IncludePending {
		args = append(args, "--include-pending")
	}
	if opts.Force {
		args = append(args, "--force")
	}
	return args
}

// GCOnHost runs gc in the host's mirror of this repository, with the same
// choices (act: remove, else a dry run), its output to run's writers. It
// returns the host's gc's exit status.
func (a *App) GCOnHost(ctx context.Context, name string, opts GCOptions, act bool, olderThan string, run HostRun) (int, error) {
	return a.runOnHost(ctx, name, run, gcHostArgs(opts, act, olderThan)...)
}
