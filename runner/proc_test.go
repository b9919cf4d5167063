package runner

import (
	"os/exec"
	"syscall"
	"testing"
)

// startSleeper starts a real process that the test ends itself.
func startSleeper(t *testing.T) *exec.Cmd {
	t.Helper()
	cmd := exec.Command("sleep", "300")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	return cmd
}

func TestAliveRecognisesTheRecordedProcess(t *testing.T) {
	cmd := startSleeper(t)
	pid := cmd.Process.Pid
	st := StartTimeOf(pid)
	if !Alive(pid, st) {
		t.Fatalf("Alive(%d, %v) = false for a running process", pid, st)
	}
	// Unknown start time: a live pid is never declared dead.
	if !Alive(pid, nil) {
		t.Fatalf("Alive(%d, nil) = false for a running process", pid)
	}
}

// A record whose pid now belongs to another process (same pid, another
// start time) is not taken for a live agent, and is not signalled.
func TestAliveRejectsReusedPID(t *testing.T) {
	cmd := startSleeper(t)
	pid := cmd.Process.Pid
	st := StartTimeOf(pid)
	if st == nil {
		t.Skip("start times cannot be read on this platform")
	}
	other := *st + 1
	if Alive(pid, &other) {
		t.Fatalf("Alive(%d, %d) = true; the process started at %d", pid, other, *st)
	}
	if !AlivePtr(&pid, st) || AlivePtr(&pid, &other) || AlivePtr(nil, st) {
		t.Fatal("AlivePtr disagrees with Alive")
	}
	if err := SignalGroup(pid, &other, syscall.SIGKILL); err == nil {
		t.Fatal("SignalGroup signalled a process that reuses the recorded pid")
	}
	if !Alive(pid, st) {
		t.Fatal("the process was signalled through a stale record")
	}
}

func TestAliveGone(t *testing.T) {
	cmd := exec.Command("true")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	st := StartTimeOf(pid)
	cmd.Wait()
	if Alive(pid, st) {
		t.Fatalf("Alive(%d) = true for a reaped process", pid)
	}
	if Alive(0, nil) || Alive(-1, nil) {
		t.Fatal("non-positive pids are never alive")
	}
}
