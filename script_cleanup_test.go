package gitagency_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/git-agency/git-agency/runner"
	"github.com/git-agency/git-agency/store"
)

// cleanupScript ends what a script left running and fails it when a
// supervisor wrote a panic or a data race report into its supervisor.log.
// It runs after the script, whether it passed or failed, before the tmux
// servers are killed.
//
// Supervisors are this test binary re-executed: built with -race (make
// test-race) they report races into supervisor.log, which no test would
// see otherwise. Scanning the logs is cheap, so the check runs always.
func cleanupScript(env *testscript.Env, dataDir string) {
	for _, p := range killRecorded(dataDir) {
		env.T().Log(p)
	}
	if problems := supervisorProblems(dataDir); len(problems) > 0 {
		if tb, ok := env.T().(testing.TB); ok {
			for _, p := range problems {
				tb.Error(p)
			}
			return
		}
		env.T().Fatal(problems)
	}
}

// killRecorded kills, with their process groups, the supervisors and
// agents that the invocation records under dataDir name and that still
// run (the same process: same pid and start time), and waits until they
// are gone. It returns what it killed.
func killRecorded(dataDir string) []string {
	waitEnding(dataDir)
	metas, _ := filepath.Glob(filepath.Join(dataDir, "repos", "*", "invocations", "*", "meta.json"))
	type proc struct {
		pid   int
		start *uint64
	}
	var live []proc
	var killed []string
	for _, m := range metas {
		b, err := os.ReadFile(m)
		if err != nil {
			continue
		}
		var r store.InvocationRecord
		if json.Unmarshal(b, &r) != nil {
			continue
		}
		for i, p := range []proc{{deref(r.SupervisorPID), r.SupervisorStartTime}, {deref(r.PID), r.PIDStartTime}} {
			if p.pid <= 0 {
				continue
			}
			// Each was started as a group leader (setsid / setpgid): its
			// group may outlive it, and no new process takes the pid
			// while the group exists. A live pid with another start
			// time is someone else's: left alone.
			alive := runner.Alive(p.pid, p.start)
			if !alive && p.start != nil && runner.Alive(p.pid, nil) {
				continue
			}
			// A group left with zombies only (an exited supervisor that
			// pid 1 has not reaped yet) runs nothing: not killed, not
			// reported.
			if !alive && !groupHasLive(p.pid) {
				continue
			}
			if syscall.Kill(-p.pid, syscall.SIGKILL) == nil || alive {
				if alive {
					syscall.Kill(p.pid, syscall.SIGKILL)
					live = append(live, p)
				}
				what := []string{"supervisor", "agent"}[i]
				if !alive {
					what += "'s group"
				}
				killed = append(killed, fmt.Sprintf("killed %s %d (record: %s) left running by %s", what, p.pid, r.Status, filepath.Dir(m)))
			}
		}
	}
	// Condition wait with a deadline: a killed process is gone once its
	// parent (init, for a detached supervisor) has reaped it.
	deadline := time.Now().Add(10 * time.Second)
	for _, p := range live {
		for runner.Alive(p.pid, p.start) && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
	}
	return killed
}

// waitEnding waits, up to a deadline, for the supervisors whose run has
// ended (record or outcome file) to exit by themselves: after the run's end
// a supervisor still writes the record, runs the notify command, starts a
// queued invocation, lands with agency.autoLand. Killed there, it would
// leave that half done; the queued one it starts is found by the kill pass
// that follows.
func waitEnding(dataDir string) {
	metas, _ := filepath.Glob(filepath.Join(dataDir, "repos", "*", "invocations", "*", "meta.json"))
	deadline := time.Now().Add(20 * time.Second)
	for _, m := range metas {
		b, err := os.ReadFile(m)
		if err != nil {
			continue
		}
		var r store.InvocationRecord
		if json.Unmarshal(b, &r) != nil || r.SupervisorPID == nil || !runEnded(filepath.Dir(m), &r) {
			continue
		}
		for runner.Alive(*r.SupervisorPID, r.SupervisorStartTime) && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
	}
}

// runEnded tells whether the run of r (whose record is in dir) has ended:
// its record is final, or its outcome file, written before the record,
// says so.
func runEnded(dir string, r *store.InvocationRecord) bool {
	if r.Status == store.StatusFinished || r.Status == store.StatusFailed {
		return true
	}
	b, err := os.ReadFile(filepath.Join(dir, "outcome.json"))
	var o store.Outcome
	return err == nil && json.Unmarshal(bytes.TrimSpace(b), &o) == nil && o.Ended
}

// groupHasLive reports whether a process of group pgid runs and is not a
// zombie.
func groupHasLive(pgid int) bool {
	ents, _ := os.ReadDir("/proc")
	want := strconv.Itoa(pgid)
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// Fields from 3 (state) on start after the command name's last ')'.
		i := bytes.LastIndexByte(b, ')')
		if i < 0 {
			continue
		}
		if f := strings.Fields(string(b[i+1:])); len(f) > 2 && f[2] == want && f[0] != "Z" {
			return true
		}
	}
	return false
}

func deref(p *int) int {
	if p == nil {
		return 0
	}
	return *p
}

// supervisorProblems lists the supervisor logs under dataDir that hold a
// Go panic or a data race report.
func supervisorProblems(dataDir string) []string {
	logs, _ := filepath.Glob(filepath.Join(dataDir, "repos", "*", "invocations", "*", "supervisor.log"))
	var problems []string
	for _, l := range logs {
		b, err := os.ReadFile(l)
		if err != nil {
			continue
		}
		for _, marker := range []string{"WARNING: DATA RACE", "panic: "} {
			if i := bytes.Index(b, []byte(marker)); i >= 0 {
				end := min(len(b), i+4000)
				problems = append(problems, fmt.Sprintf("%s holds %q:\n%s", l, marker, b[i:end]))
			}
		}
	}
	return problems
}

// writeRecord writes an invocation record naming pid (with start) as its
// agent under dataDir.
func writeRecord(t *testing.T, dataDir, inv string, pid int, start *uint64) {
	t.Helper()
	dir := filepath.Join(dataDir, "repos", "r", "invocations", inv)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(store.InvocationRecord{InvocationID: inv, PID: &pid, PIDStartTime: start})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "meta.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestKillRecordedEndsRecordedProcessesOnly(t *testing.T) {
	start := func() *exec.Cmd {
		cmd := exec.Command("sleep", "300")
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		return cmd
	}
	agent, stranger := start(), start()
	dataDir := t.TempDir()
	writeRecord(t, dataDir, "20260101000000-aaaa", agent.Process.Pid, runner.StartTimeOf(agent.Process.Pid))
	// A record whose pid now belongs to another process.
	st := runner.StartTimeOf(stranger.Process.Pid)
	if st == nil {
		t.Skip("start times cannot be read here")
	}
	other := *st + 1
	writeRecord(t, dataDir, "20260101000000-bbbb", stranger.Process.Pid, &other)

	exited := make(chan error, 1)
	go func() { exited <- agent.Wait() }()
	if killed := killRecorded(dataDir); len(killed) != 1 {
		t.Fatalf("killRecorded = %q, want the recorded agent only", killed)
	}
	select {
	case <-exited:
	case <-time.After(10 * time.Second):
		t.Fatal("the recorded agent still runs")
	}
	if !runner.Alive(stranger.Process.Pid, st) {
		t.Fatal("killRecorded killed a process that only reuses a recorded pid")
	}
}

// A recorded process that exited and waits for its reaper (a supervisor
// reparented to a pid 1 that reaps slowly) is no process left running: its
// group holds a zombie only.
func TestKillRecordedLeavesZombiesAlone(t *testing.T) {
	cmd := exec.Command("sh", "-c", "read x")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	start := runner.StartTimeOf(pid)
	if start == nil {
		t.Skip("start times cannot be read here")
	}
	dataDir := t.TempDir()
	writeRecord(t, dataDir, "20260101000000-cccc", pid, start)
	stdin.Close()
	// Not reaped (no Wait yet): it stays a zombie.
	deadline := time.Now().Add(10 * time.Second)
	for {
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if strings.Contains(string(b), ") Z ") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the process did not exit: %s", b)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if killed := killRecorded(dataDir); len(killed) != 0 {
		t.Errorf("killRecorded = %q, want nothing (a zombie runs nothing)", killed)
	}
	cmd.Wait()
}

// A supervisor whose run has ended is given time to finish by itself (its
// record, notify, the queue): it is not killed, nor reported.
func TestKillRecordedLetsAnEndedRunsSupervisorFinish(t *testing.T) {
	cmd := exec.Command("sleep", "1")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	pid := cmd.Process.Pid
	start := runner.StartTimeOf(pid)
	if start == nil {
		t.Skip("start times cannot be read here")
	}
	dataDir := t.TempDir()
	dir := filepath.Join(dataDir, "repos", "r", "invocations", "20260101000000-dddd")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(store.InvocationRecord{InvocationID: "20260101000000-dddd", Status: store.StatusFinished,
		SupervisorPID: &pid, SupervisorStartTime: start})
	if err := os.WriteFile(filepath.Join(dir, "meta.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	if killed := killRecorded(dataDir); len(killed) != 0 {
		t.Errorf("killRecorded = %q, want nothing (the supervisor ends by itself)", killed)
	}
	if err := <-exited; err != nil {
		t.Errorf("the supervisor did not end by itself: %v", err)
	}
}

func TestSupervisorProblems(t *testing.T) {
	dataDir := t.TempDir()
	write := func(inv, text string) {
		dir := filepath.Join(dataDir, "repos", "r", "invocations", inv)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "supervisor.log"), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("a", "runner started\nrunner exited 0\n")
	if p := supervisorProblems(dataDir); len(p) != 0 {
		t.Fatalf("clean log reported: %q", p)
	}
	write("b", "==================\nWARNING: DATA RACE\nWrite at 0x00c by goroutine 7:\n")
	write("c", "runner started\npanic: runtime error: index out of range\n\ngoroutine 1 [running]:\n")
	p := supervisorProblems(dataDir)
	if len(p) != 2 || !strings.Contains(p[0], "DATA RACE") || !strings.Contains(p[1], "index out of range") {
		t.Fatalf("supervisorProblems = %q, want the race and the panic", p)
	}
}
