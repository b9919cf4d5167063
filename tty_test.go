package gitagency_test

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/git-agency/git-agency/internal/testenv"
)

// git-agency and git-sandbox must not link the TUI library: its package
// init queries the terminal (OSC 11, cursor position) on every start and
// waits up to 5s for a terminal that does not answer. Only git-agency-watch
// may link it.
func TestMainProgramsDoNotLinkTheTUI(t *testing.T) {
	for _, pkg := range []string{"./cmd/git-agency", "./cmd/git-sandbox"} {
		out, err := exec.Command("go", "list", "-deps", pkg).Output()
		if err != nil {
			t.Fatalf("go list %s: %v", pkg, err)
		}
		for _, dep := range strings.Fields(string(out)) {
			if strings.Contains(dep, "charmbracelet/bubbletea") || strings.HasSuffix(dep, "git-agency/watch") {
				t.Errorf("%s links %s", pkg, dep)
			}
		}
	}
}

// On a terminal, the real binary prints its output and nothing else.
func TestNoTerminalQueriesOnATerminal(t *testing.T) {
	testenv.Need(t, "script")
	bin := filepath.Join(t.TempDir(), "git-agency")
	if out, err := exec.Command("go", "build", "-o", bin, "./cmd/git-agency").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	out, err := exec.Command("script", "-q", "-c", bin+" --version", "/dev/null").Output()
	if err != nil {
		t.Fatalf("script: %v", err)
	}
	if bytes.Contains(out, []byte("\x1b")) || !bytes.Contains(out, []byte("git-agency version")) {
		t.Errorf("output on a terminal = %q, want the version and no escape sequences", out)
	}
}
