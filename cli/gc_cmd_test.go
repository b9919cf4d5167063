package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// gc keeps a status line on a terminal's stderr (items decided, then
// removed with the bytes freed) and prints nothing there without one.
func TestGCProgressOnlyOnATerminal(t *testing.T) {
	for _, tty := range []bool{true, false} {
		env, stdout, stderr := testEnv(t)
		env.StderrTTY = tty
		a, err := env.App()
		if err != nil {
			t.Fatal(err)
		}
		orphan := a.Store.SandboxDir("20260101000000-dead")
		os.MkdirAll(orphan, 0o700)
		os.WriteFile(filepath.Join(orphan, "left.txt"), []byte(strings.Repeat("x", 2048)), 0o600)
		if code := Run(env, &AgencyCLI{}, []string{"gc", "--yes"}); code != 0 {
			t.Fatalf("tty=%v: exit %d: %s", tty, code, stderr)
		}
		if !strings.Contains(stdout.String(), "removed 1 item(s), freed 2.0 KiB") {
			t.Fatalf("tty=%v: stdout %q", tty, stdout)
		}
		if _, err := os.Stat(orphan); !os.IsNotExist(err) {
			t.Fatalf("tty=%v: orphan still there (%v)", tty, err)
		}
		got := stderr.String()
		if !tty {
			if got != "" {
				t.Fatalf("no terminal: stderr %q, want nothing", got)
			}
			continue
		}
		for _, want := range []string{"\r\x1b[Kgc: 1 decided (1 to remove, 0 kept): remove orphan_sandbox /",
			"\r\x1b[Kgc: removed 1/1, freed 2.0 KiB: orphan_sandbox /"} {
			if !strings.Contains(got, want) {
				t.Fatalf("terminal: stderr %q lacks %q", got, want)
			}
		}
		if !strings.HasSuffix(got, "\r\x1b[K") {
			t.Fatalf("terminal: the status line is not cleared at the end: %q", got)
		}
	}
}
