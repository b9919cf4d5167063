// Command checkpoint benchmarks checkpoints of a one-file change in a
// generated sandbox (20k files by default) against `git status --porcelain`
// in the same tree, and prints the ratios: a manual checkpoint (goal: at
// most 1.5) and the supervisor's automatic one, which stages the path its
// file events reported into the kept index of the last one (goal: at most
// 0.5). It never fails on a slow result; it only reports.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/git-agency/git-agency/checkpoint"
	"github.com/git-agency/git-agency/gitcore"
	"github.com/git-agency/git-agency/store"
)

func main() {
	files := flag.Int("files", 20000, "files in the generated tree")
	perDir := flag.Int("per-dir", 20, "files per directory")
	runs := flag.Int("runs", 15, "timed runs of each")
	keep := flag.Bool("keep", false, "keep the generated repository")
	flag.Parse()
	if err := run(*files, *perDir, *runs, *keep); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func git(dir string, args ...string) error {
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=bench", "GIT_AUTHOR_EMAIL=bench@example.com",
		"GIT_COMMITTER_NAME=bench", "GIT_COMMITTER_EMAIL=bench@example.com")
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return nil
}

func median(d []time.Duration) time.Duration {
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	return d[len(d)/2]
}

func run(nfiles, perDir, runs int, keep bool) error {
	root, err := os.MkdirTemp("", "agency-bench-")
	if err != nil {
		return err
	}
	if !keep {
		defer os.RemoveAll(root)
	} else {
		fmt.Println("repository:", root)
	}
	repoDir := filepath.Join(root, "repo")
	fmt.Printf("generating %d files ...\n", nfiles)
	for i := 0; i < nfiles; i++ {
		dir := filepath.Join(repoDir, fmt.Sprintf("pkg%03d", i/perDir/50), fmt.Sprintf("mod%04d", i/perDir))
		if i%perDir == 0 {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return err
			}
		}
		body := fmt.Sprintf("package mod\n\n// file %d\nfunc F%d() int { return %d }\n", i, i, i)
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%05d.go", i)), []byte(body), 0o644); err != nil {
			return err
		}
	}
	os.WriteFile(filepath.Join(repoDir, ".gitignore"), []byte("build/\n"), 0o644)
	for _, a := range [][]string{{"init", "-q", "-b", "main"}, {"add", "-A"}, {"commit", "-q", "-m", "generated"}} {
		if err := git(repoDir, a...); err != nil {
			return err
		}
	}
	ctx := context.Background()
	repo, err := gitcore.Discover(ctx, nil, repoDir)
	if err != nil {
		return err
	}
	st, err := store.Open(filepath.Join(root, "data"), repo.CommonDir)
	if err != nil {
		return err
	}
	inv := "20260101000000-beef"
	os.MkdirAll(st.InvocationDir(inv), 0o700)
	os.MkdirAll(st.SandboxDir(inv), 0o700)
	tree := st.SandboxTreePath(inv)
	if err := git(repoDir, "worktree", "add", "-q", "-b", store.SandboxBranch(inv), tree, "HEAD"); err != nil {
		return err
	}
	os.MkdirAll(filepath.Join(tree, store.AgencyDir, "state"), 0o755)
	os.WriteFile(filepath.Join(tree, store.AgencyDir, ".gitignore"), []byte("*\n"), 0o644)
	// The sandbox as an agent leaves it: index fresh, one file being edited.
	if err := git(tree, "status", "--porcelain"); err != nil {
		return err
	}
	target := filepath.Join(tree, "pkg000", "mod0000", "f00000.go")
	rel := "pkg000/mod0000/f00000.go"
	manual := checkpoint.Options{Repo: repo, Store: st, Invocation: inv, SandboxPath: tree,
		IncludeUntracked: true, Reason: store.CheckpointManual, MaxFileSize: checkpoint.DefaultMaxFileSize}
	// The supervisor's automatic checkpoint: the kept index of the last
	// one, and the path its file events reported.
	var kept gitcore.KeptIndex
	defer kept.Remove()
	auto := manual
	auto.Reason, auto.Kept = store.CheckpointAuto, &kept

	var tStatus, tManual, tAuto []time.Duration
	for i := 0; i <= runs; i++ {
		edit := func(what string) error {
			return os.WriteFile(target, []byte(fmt.Sprintf("package mod\n\n// %s %d\n", what, i)), 0o644)
		}
		take := func(o checkpoint.Options) (time.Duration, error) {
			t0 := time.Now()
			cp, err := checkpoint.Take(ctx, o)
			if err == nil && cp == nil {
				err = fmt.Errorf("run %d: %s checkpoint skipped", i, o.Reason)
			}
			return time.Since(t0), err
		}
		if err := edit("status"); err != nil {
			return err
		}
		t0 := time.Now()
		cmd := exec.Command("git", "-C", tree, "status", "--porcelain")
		cmd.Env = append(os.Environ(), "GIT_OPTIONAL_LOCKS=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("git status: %v\n%s", err, out)
		}
		ds := time.Since(t0)
		if err := edit("manual"); err != nil {
			return err
		}
		dm, err := take(manual)
		if err != nil {
			return err
		}
		if i == 0 {
			// Derive the kept index once, as the checkpointer's first
			// checkpoint does.
			auto.Changed = nil
			if _, err := take(auto); err != nil && !strings.Contains(err.Error(), "skipped") {
				return err
			}
			auto.Changed = []string{rel}
		}
		if err := edit("auto"); err != nil {
			return err
		}
		da, err := take(auto)
		if err != nil {
			return err
		}
		if i == 0 {
			continue // warm-up
		}
		tStatus, tManual, tAuto = append(tStatus, ds), append(tManual, dm), append(tAuto, da)
	}
	ms, mm, ma := median(tStatus), median(tManual), median(tAuto)
	fmt.Printf("files: %d, runs: %d (medians)\n", nfiles, runs)
	fmt.Printf("git status --porcelain:          %8.1f ms\n", float64(ms)/1e6)
	fmt.Printf("checkpoint create (manual):      %8.1f ms\n", float64(mm)/1e6)
	fmt.Printf("automatic checkpoint (1 event):  %8.1f ms\n", float64(ma)/1e6)
	fmt.Printf("ratio manual checkpoint / git status:    %.2f (goal <= 1.5)\n", float64(mm)/float64(ms))
	fmt.Printf("ratio automatic checkpoint / git status: %.2f (goal <= 0.5)\n", float64(ma)/float64(ms))
	return nil
}
