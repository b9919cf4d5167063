package subproc

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// A terminal program runs in its directory with the environment its maker
// chose, its streams rewired; a failure is an *ExitError with the code.
func TestTerminalRun(t *testing.T) {
	dir := t.TempDir()
	var out bytes.Buffer
	cmd := ShellTerminal(`pwd; printf '%s|%s\n' "$KEEP" "$0 $1"; exit "$EXITWITH"`, dir, []string{"KEEP=yes", "EXITWITH=0"}, "ed", "a b")
	cmd.SetStdio(strings.NewReader(""), &out, &out)
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	if got, want := out.String(), dir+"\nyes|ed a b\n"; got != want {
		t.Errorf("output %q, want %q", got, want)
	}
	if got := cmd.Args(); len(got) != 5 || got[0] != "/bin/sh" || got[4] != "a b" {
		t.Errorf("Args = %q", got)
	}
	fail := NewTerminal([]string{"/bin/sh", "-c", "exit 3"}, "", nil)
	fail.SetStdio(nil, &out, &out)
	err := fail.Run()
	var ee *ExitError
	if !errors.As(err, &ee) || ee.Code != 3 {
		t.Fatalf("Run of exit 3 = %v, want *ExitError code 3", err)
	}
	missing := NewTerminal([]string{"no-such-program-here-xyz"}, "", nil)
	if err := missing.Run(); err == nil || errors.As(err, &ee) {
		t.Fatalf("Run of a missing program = %v, want a start error, not an exit", err)
	}
}
