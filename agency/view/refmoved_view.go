package view

import "github.com/git-agency/git-agency/errs"

// refMovedRefusals gives the forecast of every pending view whose
// integration branch was moved behind git's back (ReflogBreak: a ref file
// written by an agent, such as a loose ref shadowing the packed branch)
// the refusal land gives it, E_REF_MOVED, rather than calling the tree
// only dirty. It reads ref and reflog files, and runs nothing.
func (a *Reader) refMovedRefusals(views []InvocationView) {
	moved := map[string]bool{}
	for i := range views {
		v := &views[i]
		if v.Forecast == nil || v.Record == nil {
			continue
		}
		if r := v.Forecast.Refused; r != "" && r != string(errs.EDirtyWorktree) {
			continue
		}
		id := v.Record.IntegrationWorktreeID
		m, seen := moved[id]
		if !seen {
			m = a.integrationMoved(id)
			moved[id] = m
		}
		if m {
			c := *v.Forecast
			c.LandsCleanly, c.Refused = false, string(errs.ERefMoved)
			v.Forecast = &c
		}
	}
}

// integrationMoved reports whether integration worktree wtID's branch
// was moved in a way its reflog does not explain.
func (a *Reader) integrationMoved(wtID string) bool {
	wt, err := a.Store.ReadWorktree(wtID)
	if err != nil || wt.Branch == "" {
		return false
	}
	ref := "refs/heads/" + wt.Branch
	tips, ok := a.Repo.RefTipsFromFiles(ref)
	if !ok || tips[ref] == "" {
		return false
	}
	_, _, broken := a.Repo.ReflogBreak(wt.Branch, tips[ref], a.Now())
	return broken
}
