package land

import (
	"fmt"

	"github.com/git-agency/git-agency/agency/internal/core"
	"github.com/git-agency/git-agency/store"
)

// Report is what a successful land says, line by line; the first line is
// its summary (watch's status line), cli prints them all.
func (r *Result) Report() []string {
	// What landed: the commits not already on the branch.
	what := core.Plural(len(r.Commits)-min(len(r.Skipped), len(r.Commits)), "commit")
	if r.Applied {
		what += " and the uncommitted changes"
	}

	lines := []string{fmt.Sprintf("landed %s: %s onto %s (worktree %q)", r.InvocationID, what, r.Branch, r.WorktreeName)}
	if len(r.Skipped) > 0 {
		lines = append(lines, fmt.Sprintf("skipped %s already on the branch", core.Plural(len(r.Skipped), "commit")))
	}
	if r.VerifyReusedFrom != "" {
		lines = append(lines, fmt.Sprintf("verify: passed on %s at %s, not run again", core.ShortSHA(r.VerifyTreeID), r.VerifiedAt))
	}

	if r.Host != "" {
		lines = append(lines, fmt.Sprintf("HEAD is now %s; the sandbox stays on host %s until 'git agency gc' (branch %s kept here)", core.ShortSHA(r.ResultHead), r.Host, store.SandboxBranch(r.InvocationID)))
	} else {
		lines = append(lines, fmt.Sprintf("HEAD is now %s; the sandbox tree was removed (branch %s kept)", core.ShortSHA(r.ResultHead), store.SandboxBranch(r.InvocationID)))
	}
	if r.Note != "" {
		lines = append(lines, "note: "+r.Note)
	}

	return lines
}
