package runner

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A log past its bound keeps its start and its end, and says how much was
// left out between them.
func TestBoundedLog(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	b := newBoundedLog(f, 20)
	for _, s := range []string{"0123456789", "abcdefghij", "ABCDEFGHIJ", "klmnopqrst"} {
		if n, err := b.Write([]byte(s)); n != len(s) || err != nil {
			t.Fatalf("Write: %d, %v", n, err)
		}
	}
	b.Close()
	got, _ := os.ReadFile(path)
	want := "0123456789\n[... 20 bytes of output left out ...]\nklmnopqrst"
	if string(got) != want {
		t.Fatalf("log %q, want %q", got, want)
	}
}

// How a verify ends: passed, a failing setup or check with its exit
// status, a check that is not found, one past its timeout (its whole
// group killed).
func TestRunVerify(t *testing.T) {
	dir := t.TempDir()
	run := func(setup, command string, timeout time.Duration) (VerifyOutcome, string) {
		log := filepath.Join(dir, "verify.log")
		out := RunVerify(context.Background(), VerifySpec{Dir: dir, Setup: setup, Command: command, Timeout: timeout, LogPath: log})
		b, _ := os.ReadFile(log)
		return out, string(b)
	}
	if out, log := run("echo set up > s", "cat s", 0); !out.Passed || *out.ExitCode != 0 || !strings.Contains(log, "set up") {
		t.Errorf("passing verify: %+v, log %q", out, log)
	}
	if out, _ := run("exit 4", "true", 0); out.Passed || *out.ExitCode != 4 || out.Error != "setup failed (exit 4)" {
		t.Errorf("failing setup: %+v", out)
	}
	if out, log := run("", "echo nope; exit 2", 0); out.Passed || *out.ExitCode != 2 || out.Error != "verify failed (exit 2)" || !strings.Contains(log, "nope\n\n[verify failed (exit 2)]") {
		t.Errorf("failing check: %+v, log %q", out, log)
	}
	if out, _ := run("", "no-such-command-here", 0); out.Passed || out.Error != "verify command not found (exit 127)" {
		t.Errorf("missing check: %+v", out)
	}
	began := time.Now()
	if out, _ := run("", "sleep 30 & sleep 30", 200*time.Millisecond); out.Passed || out.ExitCode != nil || out.Error != "verify timed out after 200ms" {
		t.Errorf("hanging check: %+v", out)
	}
	if d := time.Since(began); d > 10*time.Second {
		t.Errorf("the timeout took %s", d)
	}
	if out := RunVerify(context.Background(), VerifySpec{Dir: filepath.Join(dir, "gone"), Command: "true", LogPath: filepath.Join(dir, "l")}); out.Passed || !strings.HasPrefix(out.Error, "verify could not start: ") {
		t.Errorf("no such directory: %+v", out)
	}
}
