// Command land measures `git agency agent land` of 50 commits against
// `git cherry-pick` of the same range, and prints the ratio. It is run by
// `make bench`, never by the tests.
package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"time"

	"github.com/git-agency/git-agency/agency"
	"github.com/git-agency/git-agency/store"
)

const (
	commits = 50
	rounds  = 5
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "bench land:", err)
		os.Exit(1)
	}
}

func git(dir string, args ...string) error {
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("git %v: %v\n%s", args, err, out)
	}
	return nil
}

func run() error {
	tmp, err := os.MkdirTemp("", "agency-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	os.Setenv("AGENCY_DATA_DIR", filepath.Join(tmp, "data"))
	for k, v := range map[string]string{"GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "b@example.com",
		"GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "b@example.com", "GIT_CONFIG_NOSYSTEM": "1", "HOME": tmp} {
		os.Setenv(k, v)
	}
	repo := filepath.Join(tmp, "repo")
	if err := exec.Command("git", "init", "-q", "-b", "main", repo).Run(); err != nil {
		return err
	}
	// A repository of some size: 200 files.
	for i := 0; i < 200; i++ {
		os.WriteFile(filepath.Join(repo, fmt.Sprintf("f%03d.txt", i)), []byte(fmt.Sprintf("file %d\nline\nline\nline\n", i)), 0o644)
	}
	if err := git(repo, "add", "-A"); err != nil {
		return err
	}
	if err := git(repo, "commit", "-qm", "base"); err != nil {
		return err
	}
	ctx := context.Background()
	a, err := agency.Open(ctx, repo, nil)
	if err != nil {
		return err
	}
	for _, moved := range []bool{false, true} {
		var land, pick []time.Duration
		for r := 0; r < rounds; r++ {
			l, p, err := round(ctx, a, r, moved)
			if err != nil {
				return err
			}
			land, pick = append(land, l), append(pick, p)
		}
		ml, mp := median(land), median(pick)
		what := "onto the unchanged base"
		if moved {
			what = "onto a moved HEAD     "
		}
		fmt.Printf("land %d commits %s: git agency land %7.1f ms, git cherry-pick %7.1f ms, ratio %.2fx (median of %d; goal <= 1.2)\n",
			commits, what, ms(ml), ms(mp), float64(ml)/float64(mp), rounds)
	}
	return nil
}

// round prepares a worktree with a finished sandbox holding 50 commits and
// a second worktree at the same base, then times the land into the first
// and the cherry-pick into the second.
func round(ctx context.Context, a *agency.App, r int, moved bool) (time.Duration, time.Duration, error) {
	name := fmt.Sprintf("b%d-%v", r, moved)
	wt, err := a.CreateWorktree(ctx, agency.CreateWorktreeOptions{Name: fmt.Sprintf("land-%d-%d", r, b2i(moved))})
	if err != nil {
		return 0, 0, err
	}
	other, err := a.CreateWorktree(ctx, agency.CreateWorktreeOptions{Name: fmt.Sprintf("pick-%d-%d", r, b2i(moved))})
	if err != nil {
		return 0, 0, err
	}
	inv := store.NewID(time.Now())
	lock, err := a.Lock()
	if err != nil {
		return 0, 0, err
	}
	base, err := a.CreateSandbox(ctx, wt, inv)
	lock.Unlock()
	if err != nil {
		return 0, 0, err
	}
	sb := a.Store.SandboxTreePath(inv)
	for i := 0; i < commits; i++ {
		f := filepath.Join(sb, fmt.Sprintf("f%03d.txt", i*3))
		old, _ := os.ReadFile(f)
		os.WriteFile(f, append(old, []byte(fmt.Sprintf("change %d %s\n", i, name))...), 0o644)
		if err := git(sb, "commit", "-qam", fmt.Sprintf("change %d", i)); err != nil {
			return 0, 0, err
		}
	}
	if moved {
		for _, t := range []string{wt.TreePath, other.TreePath} {
			os.WriteFile(filepath.Join(t, "f199.txt"), []byte("moved\n"), 0o644)
			if err := git(t, "commit", "-qam", "moved"); err != nil {
				return 0, 0, err
			}
		}
	}
	rec := &store.InvocationRecord{SchemaVersion: store.SchemaVersion, InvocationID: inv,
		IntegrationWorktreeID: wt.WorktreeID, RepoID: a.Store.RepoID, SandboxPath: sb,
		SandboxBranch: store.SandboxBranch(inv), BaseCommit: base, Runner: "bench", Mode: store.ModeHeadless,
		StartedAt: time.Now().UTC().Format(time.RFC3339), Status: store.StatusFinished,
		LandingStatus: store.Str(store.LandingPending)}
	os.MkdirAll(a.Store.InvocationDir(inv), 0o700)
	if err := a.Store.WriteInvocation(rec); err != nil {
		return 0, 0, err
	}
	start := time.Now()
	if _, err := a.Land(ctx, agency.LandOptions{Query: inv}); err != nil {
		return 0, 0, err
	}
	land := time.Since(start)
	start = time.Now()
	if err := git(other.TreePath, "cherry-pick", base+".."+store.SandboxBranch(inv)); err != nil {
		return 0, 0, err
	}
	return land, time.Since(start), nil
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func median(d []time.Duration) time.Duration {
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	return d[len(d)/2]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
