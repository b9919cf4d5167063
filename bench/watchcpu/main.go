// Command watchcpu measures the CPU that `git agency watch` uses: a
// repository with 50 invocations (10 running, 40 finished and pending, 20
// per worktree, all changing one shared file too so that the conflict
// forecast has every pair to judge; -running and -old change that, for
// example to 50 running and 1000 old records), watch running
// in a real terminal (a private tmux server) at the default interval, CPU
// time of the watch process and the children it waited for, read from
// /proc before and after. It prints the share of one core (goal ≤ 3%).
//
//	go run ./bench/watchcpu -bin build/git-agency [-d 30s] [-n 50]
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

func main() {
	bin := flag.String("bin", "build/git-agency", "the git-agency binary")
	dur := flag.Duration("d", 30*time.Second, "measurement window")
	n := flag.Int("n", 50, "invocations")
	running := flag.Int("running", 10, "of which still running during the window")
	old := flag.Int("old", 0, "finished (discarded) records added beside them")
	flag.Parse()
	if err := run(*bin, *dur, *n, *running, *old); err != nil {
		fmt.Fprintln(os.Stderr, "watchcpu:", err)
		os.Exit(1)
	}
}

func run(bin string, dur time.Duration, n, running, old int) error {
	if _, err := exec.LookPath("tmux"); err != nil {
		fmt.Println("watchcpu: skipped: tmux is not installed")
		return nil
	}
	bin, err := filepath.Abs(bin)
	if err != nil {
		return err
	}
	binDir, err := os.MkdirTemp("", "watchcpu-bin-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(binDir)
	// `git agency` finds git-agency on PATH.
	if err := os.Symlink(bin, filepath.Join(binDir, "git-agency")); err != nil {
		return err
	}
	// `git agency watch` runs git-agency-watch from beside git-agency.
	if err := os.Symlink(filepath.Join(filepath.Dir(bin), "git-agency-watch"), filepath.Join(binDir, "git-agency-watch")); err != nil {
		return err
	}
	work, err := os.MkdirTemp("", "watchcpu-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	tmuxDir, err := os.MkdirTemp("/tmp", "wcpu-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmuxDir)
	repo := filepath.Join(work, "repo")
	env := append(os.Environ(),
		"PATH="+binDir+string(os.PathListSeparator)+os.Getenv("PATH"),
		"AGENCY_DATA_DIR="+filepath.Join(work, "data"),
		"TMUX_TMPDIR="+tmuxDir, "TMUX=",
		"GIT_CONFIG_NOSYSTEM=1", "HOME="+work, "TERM=xterm-256color",
		"GIT_AUTHOR_NAME=bench", "GIT_AUTHOR_EMAIL=bench@example.com",
		"GIT_COMMITTER_NAME=bench", "GIT_COMMITTER_EMAIL=bench@example.com",
	)
	sh := func(dir string, args ...string) (string, error) {
		cmd := exec.Command(args[0], args[1:]...)
		cmd.Dir, cmd.Env = dir, env
		out, err := cmd.CombinedOutput()
		if err != nil {
			return string(out), fmt.Errorf("%s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out), nil
	}
	defer sh(work, "tmux", "kill-server")
	// The running agents hold for minutes: end them, and their
	// supervisors, with the benchmark.
	defer endAgents(filepath.Join(work, "data"))
	if err := os.MkdirAll(repo, 0o755); err != nil {
		return err
	}
	for _, a := range [][]string{
		{"git", "init", "-q", "-b", "main"},
		{"git", "commit", "-q", "--allow-empty", "-m", "initial"},
		{"git", "config", "agency.runner.sh.command", "sh"},
		{"git", "config", "agency.runner.sh.headlessArg", "-c"},
		{"git", "agency", "worktree", "create", "--name", "bench-a"},
		{"git", "agency", "worktree", "create", "--name", "bench-b"},
	} {
		if _, err := sh(repo, a...); err != nil {
			return err
		}
	}
	hold := dur + 2*time.Minute
	fmt.Printf("creating %d invocations (%d running)…\n", n, running)
	for i := 0; i < n; i++ {
		wt := []string{"bench-a", "bench-b"}[i%2]
		// Each also writes shared.txt: every pair of pending sandboxes
		// conflicts, the forecast's worst case.
		prompt := fmt.Sprintf(`echo '{"type":"result","i":%d}'; echo %d > f%d.txt; echo %d > shared.txt; git add -A; git commit -qm %d`, i, i, i, i, i)
		if i < running {
			prompt = fmt.Sprintf(`while :; do echo '{"type":"tick"}'; sleep 5; done & sleep %d; kill $!`, int(hold.Seconds()))
		}
		if _, err := sh(repo, "git", "agency", "agent", "start", "-w", wt, "--runner", "sh", "--headless", "--detached", "--prompt", prompt); err != nil {
			return err
		}
	}
	// Let the finished ones finish.
	deadline := time.Now().Add(2 * time.Minute)
	for {
		out, _ := sh(repo, "git", "agency", "agent", "ls")
		if strings.Count(out, "\tfinished\t") >= n-running {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("invocations did not finish:\n%s", out)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if err := addOld(filepath.Join(work, "data"), old); err != nil {
		return err
	}
	if _, err := sh(repo, "tmux", "new-session", "-d", "-s", "watch", "-x", "80", "-y", "24", "exec git agency watch"); err != nil {
		return err
	}
	out, err := sh(repo, "tmux", "display-message", "-p", "-t", "watch", "#{pane_pid}")
	if err != nil {
		return err
	}
	pid, err := strconv.Atoi(strings.TrimSpace(out))
	if err != nil {
		return fmt.Errorf("pane pid %q: %v", out, err)
	}
	// Warm up: wait until the first frame is drawn.
	deadline = time.Now().Add(20 * time.Second)
	for {
		screen, _ := sh(repo, "tmux", "capture-pane", "-p", "-t", "watch")
		if strings.Contains(screen, "bench-a") || strings.Contains(screen, "bench-b") {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("watch did not draw:\n%s", screen)
		}
		time.Sleep(100 * time.Millisecond)
	}
	c0, err := cpuTicks(pid)
	if err != nil {
		return err
	}
	t0 := time.Now()
	time.Sleep(dur)
	c1, err := cpuTicks(pid)
	if err != nil {
		return fmt.Errorf("watch is gone: %v", err)
	}
	wall := time.Since(t0)
	screen, _ := sh(repo, "tmux", "capture-pane", "-p", "-t", "watch")
	sh(repo, "tmux", "send-keys", "-t", "watch", "q")

	const hz = 100 // USER_HZ on Linux
	cpu := time.Duration(float64(c1-c0) / hz * float64(time.Second))
	share := 100 * cpu.Seconds() / wall.Seconds()
	fmt.Print(screen)
	fmt.Printf("watch CPU: %s over %s with %d invocations (%d running, %d pending, all conflicting) and %d old records at the default interval: %.2f%% of one core (goal ≤ 3%%)\n",
		cpu, wall.Round(time.Millisecond), n, running, n-running, old, share)
	if share > 3 {
		fmt.Println("watchcpu: above the goal")
	}
	return nil
}

// cpuTicks is the CPU time of pid and its descendants (git runs
// git-agency as a child), children they waited for included, in clock
// ticks.
func cpuTicks(root int) (int64, error) {
	total, _, err := procStat(root)
	if err != nil {
		return 0, err
	}
	ents, _ := os.ReadDir("/proc")
	parent := map[int]int{}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if _, ppid, err := procStat(pid); err == nil {
			parent[pid] = ppid
		}
	}
	for pid := range parent {
		for p := parent[pid]; p > 1; p = parent[p] {
			if p == root {
				t, _, err := procStat(pid)
				if err == nil {
					total += t
				}
				break
			}
		}
	}
	return total, nil
}

// procStat is utime+stime+cutime+cstime and the parent of pid.
func procStat(pid int) (int64, int, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, 0, err
	}
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, 0, fmt.Errorf("bad /proc stat")
	}
	f := strings.Fields(s[i+2:])
	// fields after ")": state(0) ppid(1) ... utime(11) stime(12) cutime(13) cstime(14)
	ppid, _ := strconv.Atoi(f[1])
	var total int64
	for _, k := range []int{11, 12, 13, 14} {
		v, err := strconv.ParseInt(f[k], 10, 64)
		if err != nil {
			return 0, 0, err
		}
		total += v
	}
	return total, ppid, nil
}

// addOld writes n discarded invocation records, copies of the first record
// under new ids: the history a long-used repository has.
func addOld(data string, n int) error {
	if n == 0 {
		return nil
	}
	dirs, err := filepath.Glob(filepath.Join(data, "repos", "*", "invocations", "*"))
	if err != nil || len(dirs) == 0 {
		return fmt.Errorf("no invocation record to copy (%v)", err)
	}
	raw, err := os.ReadFile(filepath.Join(dirs[0], "meta.json"))
	if err != nil {
		return err
	}
	for i := 0; i < n; i++ {
		var rec map[string]any
		if err := json.Unmarshal(raw, &rec); err != nil {
			return err
		}
		id := fmt.Sprintf("20200101%06d-%04x", i/4096, i%4096)
		rec["invocation_id"], rec["status"], rec["landing_status"] = id, "finished", "discarded"
		rec["exit_reason"], rec["exit_code"], rec["finished_at"], rec["discarded_at"] = "exited", 0, "2020-01-02T00:00:00Z", "2020-01-02T00:00:00Z"
		rec["pid"], rec["supervisor_pid"], rec["started_at"] = nil, nil, "2020-01-01T00:00:00Z"
		b, err := json.MarshalIndent(rec, "", "  ")
		if err != nil {
			return err
		}
		dir := filepath.Join(filepath.Dir(dirs[0]), id)
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, "meta.json"), b, 0o600); err != nil {
			return err
		}
	}
	return nil
}

// endAgents kills every agent (its process group) and supervisor the
// records under dataDir name, when the process still belongs to this
// benchmark (its environment names dataDir).
func endAgents(dataDir string) {
	metas, _ := filepath.Glob(filepath.Join(dataDir, "repos", "*", "invocations", "*", "meta.json"))
	for _, m := range metas {
		data, err := os.ReadFile(m)
		if err != nil {
			continue
		}
		var rec struct {
			PID           int `json:"pid"`
			SupervisorPID int `json:"supervisor_pid"`
		}
		if json.Unmarshal(data, &rec) != nil {
			continue
		}
		for _, pid := range []int{rec.PID, rec.SupervisorPID} {
			env, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
			if pid <= 0 || err != nil || !strings.Contains(string(env), "AGENCY_DATA_DIR="+dataDir+"\x00") {
				continue
			}
			syscall.Kill(-pid, syscall.SIGKILL) // the agent's process group
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}
