package gitagency_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/git-agency/git-agency/internal/testenv"
)

// A script that needs tmux skips without it on a developer's machine, and
// fails under CI=true: run agent_headed.txtar with a PATH that has every
// program of the real one but tmux.
func TestScriptsNeedingToolsFailUnderCI(t *testing.T) {
	path := pathWithout(t, "tmux")
	script := "testdata/scripts/agent_headed.txtar"
	for _, c := range []struct {
		ci             string
		failed, skiped bool
	}{{"true", true, false}, {"", false, true}} {
		t.Setenv("CI", c.ci)
		t.Setenv("PATH", path)
		r := &recordT{}
		params := ScriptParams(t, "")
		params.Dir, params.Files = "", []string{script}
		testscript.RunT(r, params)
		if r.failed != c.failed || r.skipped != c.skiped {
			t.Errorf("CI=%q, no tmux: failed %v, skipped %v; want failed %v, skipped %v\n%s",
				c.ci, r.failed, r.skipped, c.failed, c.skiped, r.log.String())
		}
		if c.failed && !strings.Contains(r.log.String(), "CI=true and tmux is not installed") {
			t.Errorf("CI=true: the failure does not say tmux is missing:\n%s", r.log.String())
		}
	}
}

// Every script asks for a tool CI installs with [need:PROG], which fails
// under CI=true, never with testscript's [exec:PROG], which would skip.
func TestScriptsAskForCIToolsWithNeed(t *testing.T) {
	files, err := filepath.Glob("testdata/scripts/*.txtar")
	if err != nil || len(files) == 0 {
		t.Fatal("no scripts", err)
	}
	cond := regexp.MustCompile(`\[!?exec:([^\]]+)\]`)
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(b), "\n") {
			for _, m := range cond.FindAllStringSubmatch(line, -1) {
				if slices.Contains(testenv.Tools, m[1]) {
					t.Errorf("%s:%d: %s: use [need:%s], which fails under CI=true instead of skipping", f, i+1, m[0], m[1])
				}
			}
		}
	}
}

// pathWithout is a PATH with every program of this one but prog (links in
// a directory of their own).
func pathWithout(t *testing.T, prog string) string {
	dir := t.TempDir()
	for _, d := range filepath.SplitList(os.Getenv("PATH")) {
		entries, _ := os.ReadDir(d)
		for _, e := range entries {
			if e.Name() == prog {
				continue
			}
			// The first on PATH wins, as for a lookup.
			os.Symlink(filepath.Join(d, e.Name()), filepath.Join(dir, e.Name()))
		}
	}
	return dir
}

// recordT is a testscript.T that records a script's outcome instead of
// failing the test that runs it.
type recordT struct {
	log             strings.Builder
	failed, skipped bool
}

// stop ends a script's goroutine at Fatal, FailNow or Skip (Run recovers).
type stop struct{}

func (r *recordT) Skip(args ...any) {
	r.skipped = true
	fmt.Fprintln(&r.log, args...)
	panic(stop{})
}
func (r *recordT) Fatal(args ...any) {
	r.failed = true
	fmt.Fprintln(&r.log, args...)
	panic(stop{})
}
func (r *recordT) FailNow()        { r.failed = true; panic(stop{}) }
func (r *recordT) Log(args ...any) { fmt.Fprintln(&r.log, args...) }
func (r *recordT) Parallel()       {}
func (r *recordT) Verbose() bool   { return true }
func (r *recordT) Run(_ string, f func(testscript.T)) {
	defer func() {
		if v := recover(); v != nil {
			if _, ok := v.(stop); !ok {
				panic(v)
			}
		}
	}()
	f(r)
}
