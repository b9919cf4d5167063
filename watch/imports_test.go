package watch

import (
	"os/exec"
	"strings"
	"testing"
)

// watch is a front end over agency, beside cli: it never imports cli.
func TestWatchDoesNotImportCLI(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, p := range strings.Fields(string(out)) {
		if p == "github.com/git-agency/git-agency/cli" {
			t.Fatalf("watch imports %s (through its dependencies)", p)
		}
	}
}
