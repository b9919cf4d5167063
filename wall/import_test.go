package wall

import (
	"context"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/git-agency/git-agency/gitcore"
	"github.com/git-agency/git-agency/internal/testrepo"
	"github.com/git-agency/git-agency/internal/testsandbox"
)

// casRacer is a git runner whose first compare-and-swap of ref loses: just
// before it, another import moves ref to first (an earlier commit of the
// agent's), as the supervisor's import task racing a checkpoint's does.
type casRacer struct {
	ref, first string
	fired      atomic.Bool
}

func (c *casRacer) Run(ctx context.Context, cmd gitcore.Cmd) (gitcore.Result, error) {
	if i := indexOf(cmd.Args, "update-ref"); i >= 0 && indexOf(cmd.Args, c.ref) > i && c.fired.CompareAndSwap(false, true) {
		race := cmd
		race.Args = append(append([]string(nil), cmd.Args[:i]...), "update-ref", c.ref, c.first)
		if _, err := (gitcore.ExecRunner{}).Run(ctx, race); err != nil {
			return gitcore.Result{}, err
		}
	}
	return gitcore.ExecRunner{}.Run(ctx, cmd)
}

func indexOf(args []string, s string) int {
	for i, a := range args {
		if a == s {
			return i
		}
	}
	return -1
}

// The import's compare-and-swap loses to another import that brought in
// an earlier commit of the agent's: the swap is tried again from there,
// and the agent's last commit is on the sandbox branch.
func TestImportShadowRetriesALostSwap(t *testing.T) {
	ctx := context.Background()
	dir := testrepo.New(t)
	const branch = "agency/sandbox-x"
	testrepo.Git(t, dir, "branch", branch)
	racer := &casRacer{ref: "refs/heads/" + branch}
	repo, err := gitcore.Discover(ctx, racer, dir)
	if err != nil {
		t.Fatal(err)
	}
	shadow := filepath.Join(t.TempDir(), "git")
	if err := PrepareShadow(ctx, repo, shadow, t.TempDir(), branch); err != nil {
		t.Fatal(err)
	}
	first := testsandbox.ShadowCommit(t, repo, shadow, branch, "one")
	tip := testsandbox.ShadowCommit(t, repo, shadow, branch, "two")
	racer.first = first
	moved, err := ImportShadow(ctx, repo, shadow, branch)
	if err != nil {
		t.Fatalf("import: %v", err)
	}
	if !racer.fired.Load() {
		t.Fatal("the swap was never raced: the test proves nothing")
	}
	if got := testrepo.Git(t, dir, "rev-parse", branch); got != tip || !moved {
		t.Fatalf("sandbox branch at %s (moved %v), want the agent's last commit %s", got, moved, tip)
	}
	if lastImported(shadow) != tip {
		t.Fatalf("last imported %q, want %s", lastImported(shadow), tip)
	}
}
