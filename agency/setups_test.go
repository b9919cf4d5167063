package agency

import (
	"context"
	"strings"
	"testing"

	"github.com/git-agency/git-agency/errs"
	"github.com/git-agency/git-agency/gitcore"
)

// otherMainRunner answers `worktree list` with another repository's tree
// as the main worktree.
type otherMainRunner struct{ other string }

func (o otherMainRunner) Run(ctx context.Context, c gitcore.Cmd) (gitcore.Result, error) {
	if strings.Contains(strings.Join(c.Args, " "), "worktree list --porcelain -z") {
		return gitcore.Result{Stdout: []byte("worktree " + o.other + "\x00HEAD 0000000000000000000000000000000000000000\x00detached\x00\x00")}, nil
	}
	return gitcore.ExecRunner{}.Run(ctx, c)
}

// A supervisor would find no repository (or another one) in a directory
// that is not a worktree of this repository: agent start refuses before
// the spawn, instead of exiting 0 for a run that is doomed.
func TestSupervisorDirOutsideRepository(t *testing.T) {
	repo, other := newRepo(t), newRepo(t)
	ctx := context.Background()
	a, err := Open(ctx, repo, otherMainRunner{other: other})
	if err != nil {
		t.Fatal(err)
	}
	dir, err := a.supervisorDir(ctx)
	if err == nil || !errs.Is(err, errs.EInternal) {
		t.Fatalf("supervisorDir = %q, %v; want a refusal", dir, err)
	}
}
