package gitagency_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/git-agency/git-agency/internal/testenv"
)

// TestMakeInstall runs 'make install' into a temporary GOBIN and checks
// that man finds the pages through PATH alone (MANPATH unset) and that the
// completion scripts are where bash-completion ($XDG_DATA_HOME) and zsh
// look.
func TestMakeInstall(t *testing.T) {
	root := t.TempDir()
	gobin := filepath.Join(root, "bin")
	runMake(t, nil, "install", "GOBIN="+gobin, "BUILD="+filepath.Join(root, "build"),
		"XDG_DATA_HOME="+filepath.Join(root, "data"))

	for _, f := range []string{
		"bin/git-agency", "bin/git-sandbox",
		"share/man/man1/git-agency.1", "share/man/man1/git-sandbox.1",
		"share/man/man1/git-agency-agent-land.1", "share/man/man1/git-sandbox-land.1",
		"share/man/man1/git-agency-gc.1", "share/man/man7/git-agency-landing.7",
		"data/bash-completion/completions/git-agency", "data/bash-completion/completions/git-sandbox",
		"share/zsh/site-functions/_git-agency", "share/zsh/site-functions/_git-sandbox",
	} {
		if _, err := os.Stat(filepath.Join(root, f)); err != nil {
			t.Errorf("make install did not install %s", f)
		}
	}

	testenv.Need(t, "man")
	env := withoutEnv("MANPATH", "PATH")
	for _, page := range []string{"git-agency", "git-agency-agent-land", "git-sandbox-land", "git-agency-landing"} {
		man := exec.Command("man", "-w", page)
		man.Env = append(env, "PATH="+gobin+string(os.PathListSeparator)+os.Getenv("PATH"))
		out, err := man.Output()
		if err != nil {
			t.Fatalf("man -w %s: %v", page, err)
		}
		want := filepath.Join(root, "share/man/man1", page+".1")
		if page == "git-agency-landing" {
			want = filepath.Join(root, "share/man/man7", page+".7")
		}
		if got := strings.TrimSpace(string(out)); got != want {
			t.Errorf("man -w %s = %q, want %q", page, got, want)
		}
	}
}

// TestDemo runs 'make demo' (demo/demo.sh) with its temp directory under a
// test directory, and checks that it ran the agents and left nothing.
func TestDemo(t *testing.T) {
	tmp := t.TempDir()
	out := runMake(t, append(os.Environ(), "TMPDIR="+tmp, "DEMO_DELAY=20ms", "AGENCY_DATA_DIR="+filepath.Join(tmp, "must-not-be-used")),
		"-s", "demo")

	for _, want := range []string{"ready to land", "Welcome to the shop!", "$ git agency agent diff", "## commits: 1", "the integration log", "removing "} {
		if !strings.Contains(out, want) {
			t.Errorf("demo output lacks %q:\n%s", want, out)
		}
	}

	ents, _ := os.ReadDir(tmp)
	if len(ents) != 0 {
		t.Errorf("demo left %d entries in its TMPDIR (first: %s)", len(ents), ents[0].Name())
	}
}
