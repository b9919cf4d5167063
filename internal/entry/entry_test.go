package entry

import (
	"bytes"
	"strings"
	"testing"
)

// Only the hidden names are taken; everything else goes on to the grammar.
func TestRunTakesOnlyHiddenEntryPoints(t *testing.T) {
	for _, args := range [][]string{nil, {"agent", "ls"}, {"--help"}, {"wall-exec-not"}} {
		if _, ok := Run(args, strings.NewReader(""), &bytes.Buffer{}); ok {
			t.Errorf("%q was taken as a hidden entry point", args)
		}
	}
	called := false
	if Main([]string{"agent", "ls"}, func([]string) int { called = true; return 7 }) != 7 || !called {
		t.Error("Main did not hand a command to the grammar")
	}
}

// hook-event exits 0 and prints nothing, whatever it is given; wall-exec
// without a command is a usage error.
func TestHiddenEntryPoints(t *testing.T) {
	var stderr bytes.Buffer
	if status, ok := Run([]string{"hook-event", "--out"}, strings.NewReader("not json"), &stderr); !ok || status != 0 || stderr.Len() != 0 {
		t.Errorf("hook-event: status %d, taken %v, stderr %q", status, ok, stderr.String())
	}
	if status, ok := Run([]string{"wall-exec", "--"}, strings.NewReader(""), &stderr); !ok || status != 2 {
		t.Errorf("wall-exec without a command: status %d, taken %v", status, ok)
	}
}
