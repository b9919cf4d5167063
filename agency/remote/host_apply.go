package remote

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/git-agency/git-agency/agency/internal/core"
	"github.com/git-agency/git-agency/agency/land"
	"github.com/git-agency/git-agency/errs"
	"github.com/git-agency/git-agency/gitcore"
	"github.com/git-agency/git-agency/store"
)

// `agent land --apply` of an invocation on a host: its uncommitted work
// is there, so the host makes it a commit (on top of the sandbox branch,
// under refs/agency/apply/<id>, the sandbox untouched) and this side
// fetches it; the land here then takes that commit as the uncommitted part.

// hostApplyRef is where a host keeps the commit of an invocation's
// uncommitted work, and where this side fetches it to.
func hostApplyRef(id string) string { return land.HostApplyRef(id) }

// HostApply is what `host-serve apply` says.
type HostApply struct {
	// Commit is the uncommitted work's commit ("" when there is none).
	Commit string `json:"commit"`
}

// ServeApply is `host-serve apply`: the uncommitted work of invocation id
// of the caller's repository as a commit whose parent is the sandbox's
// HEAD, kept under hostApplyRef (removed when there is none). The paths
// a land never takes (the denylist) stay out, as a local land --apply
// leaves them.
func ServeApply(ctx context.Context, open Opener, repoID, id string) (*HostApply, error) {
	a, err := openServedMirror(ctx, open, repoID)
	if err != nil {
		return nil, err
	}

	rec, err := a.Agency.ResolveInvocation(id)
	if err != nil {
		return nil, err
	}

	switch {
	case store.Deref(rec.LandingStatus) == store.LandingLanded:
		return nil, errs.AlreadyLanded(rec.InvocationID)
	case store.Deref(rec.LandingStatus) == store.LandingDiscarded:
		return nil, errs.NothingToLandDiscarded(rec.InvocationID)
	case rec.Active():
		return nil, errs.InvocationRunning(rec.InvocationID, "land")
	}

	out := &HostApply{}
	tree := a.SandboxTree(rec)
	if tree == "" {
		return out, core.GitErr(a.Repo.DeleteRef(ctx, hostApplyRef(rec.InvocationID)))
	}

	snap, err := a.Agency.SnapshotSandbox(ctx, tree, nil)
	if err != nil {
		return nil, err
	}
	if len(snap.Denied) > 0 {
		return nil, errs.LandDenylisted(rec.InvocationID, snap.Denied)
	}
	if len(snap.Nested) > 0 {
		return nil, errs.LandNestedRepo(rec.InvocationID, snap.Nested)
	}

	changed, err := a.Repo.DiffNames(ctx, snap.Head, snap.Tree)
	if err != nil {
		return nil, core.GitErr(err)
	}
	if len(changed) == 0 {
		return out, core.GitErr(a.Repo.DeleteRef(ctx, hostApplyRef(rec.InvocationID)))
	}

	msg := "agency: land invocation " + rec.InvocationID + "\n"
	if out.Commit, err = a.Repo.WriteCommit(ctx, snap.Tree, []string{snap.Head}, msg, nil, gitcore.Writer{}); err != nil {
		return nil, core.GitErr(err)
	}

	return out, core.GitErr(a.Repo.UpdateRef(ctx, hostApplyRef(rec.InvocationID), out.Commit))
}

// HostApplyAll asks the host of each of ids that runs on a host for the
// commit of its uncommitted work and fetches it (with its branch and
// checkpoints), before a land --apply here. Local invocations are left.
func (a *Remote) HostApplyAll(ctx context.Context, ids []string) error {
	for _, q := range ids {
		rec, err := a.Agency.ResolveInvocation(q)
		if err != nil || rec.Host == "" {
			continue
		}
		if err := a.hostApply(ctx, rec); err != nil {
			return err
		}
	}

	return nil
}

func (a *Remote) hostApply(ctx context.Context, rec *store.InvocationRecord) error {
	h, mirror, err := a.hostMirror(ctx, rec.Host)
	if err != nil {
		return err
	}

	ctx, cancel := context.WithTimeout(ctx, hostActWithin)
	defer cancel()
	out, err := a.hostCall(ctx, h, nil, "host-serve", "apply", "--repo-id", a.Store.RepoID, rec.InvocationID)
	if err != nil {
		return a.unreachableErr(rec.Host, err)
	}

	var ap HostApply
	if err := json.Unmarshal(out, &ap); err != nil {
		return errs.HostFailed(rec.Host, "host-serve apply", 0, "unreadable answer: "+strings.TrimSpace(string(out)))
	}

	ref := hostApplyRef(rec.InvocationID)
	if ap.Commit == "" {
		return core.GitErr(a.Repo.DeleteRef(ctx, ref))
	}

	b := store.SandboxBranch(rec.InvocationID)
	if err := a.Repo.FetchOver(ctx, h.SSHCommand(), h.URL(mirror), a.uploadPack(), "+refs/heads/"+b+":refs/heads/"+b, "+"+ref+":"+ref); err != nil {
		return core.GitErr(err)
	}

	return nil
}
