package land

import (
	"context"
	"errors"
	"os"
	"path/filepath"

	"github.com/git-agency/git-agency/agency/internal/core"
	"github.com/git-agency/git-agency/errs"
	"github.com/git-agency/git-agency/gitcore"
	"github.com/git-agency/git-agency/store"
)

// landWriter is how land writes the commits it puts on the integration
// branch: as the user, as cherry-pick would (refused before anything is
// written when git knows no identity for them), and signed when the
// user's commit.gpgsign asks for it, as cherry-pick does. check (land
// --check) only predicts: its commits are never on a branch, so they are
// written as git-agency, unsigned. A land also titles the commit of the
// uncommitted work in work (landMessage).
func (a *Lander) landWriter(ctx context.Context, rec *store.InvocationRecord, wt *store.WorktreeRecord, work *Work, check bool) (gitcore.Writer, error) {
	if check {
		return gitcore.Writer{}, nil
	}
	if work.Applied {
		work.Commits[len(work.Commits)-1].Message = a.landMessage(rec)
	}
	if _, err := a.Repo.CommitterIdent(ctx); err != nil {
		var ge *gitcore.GitError
		if errors.As(err, &ge) {
			return gitcore.Writer{}, errs.NoIdentity(rec.InvocationID, ge.Stderr)
		}
		return gitcore.Writer{}, err
	}
	sign, err := a.Repo.Tree(wt.TreePath).SignsCommits(ctx)
	if err != nil {
		return gitcore.Writer{}, core.GitErr(err)
	}
	return gitcore.Writer{User: true, Sign: sign}, nil
}

// landCommitErr is the error of a replay that failed writing commits: a
// signature that could not be made says so, with its fix.
func landCommitErr(inv string, err error) error {
	var se *gitcore.SignError
	if errors.As(err, &se) {
		return errs.SigningFailed(inv, core.GitErr(se.Err))
	}
	return core.GitErr(err)
}

// landTrailer names the invocation a landed commit of uncommitted work
// came from.
const landTrailer = "Agency-Invocation: "

// landMessage is the message of the commit `land --apply` makes of a
// sandbox's uncommitted work: the first line of the prompt (else of the
// agent's summary) as its title, and the invocation in a trailer. Only a
// land writes it: the commits of predictions (land --check, the forecast)
// stay untitled, so the prompt's text enters no object until it lands.
func (a *Lander) landMessage(rec *store.InvocationRecord) string {
	inv := rec.InvocationID
	title := ""
	if b, err := os.ReadFile(filepath.Join(a.Store.InvocationDir(inv), "prompt.md")); err == nil {
		title = core.FirstLine(string(b))
	}
	if title == "" {
		title = core.FirstLine(rec.SemanticSummary)
	}
	if title == "" {
		title = "agency: land invocation " + inv
	}
	return title + "\n\n" + landTrailer + inv + "\n"
}
