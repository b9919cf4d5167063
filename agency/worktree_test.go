package agency

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/git-agency/git-agency/errs"
	"github.com/git-agency/git-agency/gitcore"
	"github.com/git-agency/git-agency/internal/testrepo"
	"github.com/git-agency/git-agency/store"
)

// failingRunner runs real git but fails the Nth call whose arguments contain
// match, after (or instead of) running it.
type failingRunner struct {
	match    string
	n        int
	runFirst bool // run the real command, then report failure
	seen     int
}

func (f *failingRunner) Run(ctx context.Context, c gitcore.Cmd) (gitcore.Result, error) {
	if strings.Contains(strings.Join(c.Args, " "), f.match) {
		f.seen++
		if f.seen == f.n {
			if f.runFirst {
				gitcore.ExecRunner{}.Run(ctx, c)
			}
			return gitcore.Result{ExitCode: 128}, &gitcore.GitError{Args: c.Args, ExitCode: 128, Stderr: "fatal: injected"}
		}
	}
	return gitcore.ExecRunner{}.Run(ctx, c)
}

func newRepo(t *testing.T) string { return testrepo.New(t) }

func gitOut(t *testing.T, dir string, args ...string) string {
	out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).Output()
	if err != nil {
		t.Fatalf("git %v: %v", args, err)
	}
	return string(out)
}

// All or nothing: git worktree add succeeds (really ran), then the next
// git call fails; nothing is left behind.
func TestCreateCleanupAfterWorktreeAdd(t *testing.T) {
	for _, fail := range []struct {
		name     string
		match    string
		runFirst bool
	}{
		{"worktree add reports failure after doing its work", "worktree add", true},
		{"worktree add fails outright", "worktree add", false},
	} {
		t.Run(fail.name, func(t *testing.T) {
			repo := newRepo(t)
			ctx := context.Background()
			a, err := Open(ctx, repo, &failingRunner{match: fail.match, n: 1, runFirst: fail.runFirst})
			if err != nil {
				t.Fatal(err)
			}
			_, err = a.CreateWorktree(ctx, CreateWorktreeOptions{Name: "feat"})
			if !errs.Is(err, errs.EGit) || !strings.Contains(err.Error(), "injected") {
				t.Fatalf("err = %v, want the injected git failure", err)
			}
			assertNothingLeft(t, a, repo)
		})
	}
	t.Run("marker write fails (read-only tree)", func(t *testing.T) {
		repo := newRepo(t)
		ctx := context.Background()
		a, err := Open(ctx, repo, nil)
		if err != nil {
			t.Fatal(err)
		}
		a.Failpoint = func(step string) error {
			if step == FPCreateAfterWorktreeAdd {
				// Make the new tree read-only so the marker cannot be written.
				trees, _ := filepath.Glob(filepath.Join(a.Store.IntegrationWorktreesDir(), "*", "tree"))
				for _, tr := range trees {
					os.Chmod(tr, 0o555)
				}
			}
			return nil
		}
		if os.Geteuid() == 0 {
			t.Skip("root ignores directory permissions")
		}
		_, err = a.CreateWorktree(ctx, CreateWorktreeOptions{Name: "feat"})
		if !errs.Is(err, errs.EIO) {
			t.Fatalf("err = %v, want E_IO", err)
		}
		assertNothingLeft(t, a, repo)
	})
}

func assertNothingLeft(t *testing.T, a *App, repo string) {
	t.Helper()
	if wt := gitOut(t, repo, "worktree", "list", "--porcelain"); strings.Count(wt, "worktree ") != 1 {
		t.Errorf("worktree still registered:\n%s", wt)
	}
	if br := gitOut(t, repo, "branch", "--list", "agency/*"); br != "" {
		t.Errorf("branch left behind: %s", br)
	}
	ents, _ := os.ReadDir(a.Store.IntegrationWorktreesDir())
	if len(ents) != 0 {
		t.Errorf("record directory left behind: %v", ents)
	}
}

// `agent start` racing `worktree rm`: the worktree is
// removed after the start resolved it but before it takes the lock. The
// start fails with E_ARCHIVED (not E_INTERNAL chdir) and leaves nothing.
func TestStartRacingWorktreeRm(t *testing.T) {
	repo := newRepo(t)
	ctx := context.Background()
	gitOut(t, repo, "config", "agency.runner.sh.command", "sh")
	gitOut(t, repo, "config", "agency.runner.sh.headlessArg", "-c")
	a, err := Open(ctx, repo, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.CreateWorktree(ctx, CreateWorktreeOptions{Name: "feat"}); err != nil {
		t.Fatal(err)
	}
	a.Failpoint = func(step string) error {
		if step == FPStartBeforeLock {
			if _, err := a.RemoveWorktree(ctx, RemoveWorktreeOptions{Query: "feat"}); err != nil {
				t.Fatalf("worktree rm: %v", err)
			}
		}
		return nil
	}
	_, err = a.StartInvocation(ctx, StartOptions{Worktree: "feat", Runner: "sh", Headless: true, Prompt: "true"})
	if !errs.Is(err, errs.EArchived) {
		t.Fatalf("err = %v, want E_ARCHIVED", err)
	}
	if names, _ := store.ReadDirNames(a.Store.InvocationsDir()); len(names) != 0 {
		t.Errorf("invocations left: %v", names)
	}
	if out := gitOut(t, repo, "branch", "--list", "agency/sandbox-*"); out != "" {
		t.Errorf("sandbox branches left: %q", out)
	}
}
