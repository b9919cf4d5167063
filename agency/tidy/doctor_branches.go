package tidy

import (
	"context"
	"sort"
	"strings"

	"github.com/git-agency/git-agency/store"
)

// checkGoneSandboxBranches: pending invocations whose sandbox branch was
// deleted by another program (`git branch -D` once its tree was removed,
// `git update-ref -d`). Land cannot take them, though their rows still say
// what their last state was. One for-each-ref for all of them.
func (a *Tidier) checkGoneSandboxBranches(ctx context.Context, add addFinding, records map[string]*store.InvocationRecord) {
	var pending []*store.InvocationRecord
	for _, r := range records {
		if r != nil && !r.Active() && r.SandboxBranch != "" && r.LandingStatus != nil && *r.LandingStatus == store.LandingPending {
			pending = append(pending, r)
		}
	}

	sort.Slice(pending, func(i, j int) bool { return pending[i].InvocationID < pending[j].InvocationID })
	if len(pending) == 0 {
		return
	}

	refs, err := a.Repo.ForEachRef(ctx, "refs/heads/"+store.SandboxBranch("*"))
	if err != nil {
		return
	}

	have := map[string]bool{}
	for _, ref := range refs {
		have[strings.TrimPrefix(ref.Name, "refs/heads/")] = true
	}

	for _, r := range pending {
		if have[r.SandboxBranch] {
			continue
		}
		add("branches", LevelProblem,
			"discard it with 'git agency agent discard "+r.InvocationID+"' (its checkpoints stay in refs/agency/snapshots/"+r.InvocationID+"/ until gc)", "",
			"invocation %s: its branch %s is gone (deleted by another program), so it cannot land", r.InvocationID, r.SandboxBranch)
	}
}
