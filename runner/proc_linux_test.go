package runner

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// procState reads what StartTime and the state field say, in one read: a
// command name with spaces and parentheses does not shift the fields, and
// a zombie is not alive.
func TestProcStateOneRead(t *testing.T) {
	dir := t.TempDir()
	odd := filepath.Join(dir, "a) b (c")
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip("no sleep")
	}
	if err := os.Symlink(sleep, odd); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(odd, "300")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	pid := cmd.Process.Pid
	want, err := StartTime(pid)
	if err != nil {
		t.Fatal(err)
	}
	alive, start, err := procState(pid)
	if !alive || err != nil || start != want {
		t.Fatalf("procState(%d) = %v, %d, %v; want alive, %d", pid, alive, start, err, want)
	}

	// A child that exited and is not reaped yet is a zombie.
	z := exec.Command("true")
	if err := z.Start(); err != nil {
		t.Fatal(err)
	}
	defer z.Wait()
	deadline := time.Now().Add(10 * time.Second)
	for {
		f, err := statFields(z.Process.Pid)
		if err == nil && len(f) > 0 && f[0] == "Z" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the child never became a zombie: %v %v", f, err)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if alive, _, _ := procState(z.Process.Pid); alive {
		t.Fatal("a zombie is alive")
	}
}
