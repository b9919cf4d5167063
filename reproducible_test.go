package gitagency_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Two `make man` builds of one commit write byte-identical pages, dated
// with the commit's date (SOURCE_DATE_EPOCH unset), not the build's; with
// SOURCE_DATE_EPOCH set, with that.
func TestManBuildsAreReproducible(t *testing.T) {
	root := t.TempDir()
	var builds []map[string][]byte
	for _, b := range []string{"one", "two"} {
		runMake(t, withoutEnv("SOURCE_DATE_EPOCH"), "-s", "man", "BUILD="+filepath.Join(root, b))
		pages := map[string][]byte{}
		files, _ := filepath.Glob(filepath.Join(root, b, "man", "*"))
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			pages[filepath.Base(f)] = data
		}
		if len(pages) < 10 {
			t.Fatalf("make man wrote %d pages", len(pages))
		}
		builds = append(builds, pages)
	}

	for name, one := range builds[0] {
		if !bytes.Equal(one, builds[1][name]) {
			t.Errorf("%s differs between two builds of one commit", name)
		}
	}
	if len(builds[0]) != len(builds[1]) {
		t.Errorf("%d pages, then %d", len(builds[0]), len(builds[1]))
	}

	// SOURCE_DATE_EPOCH, when set, dates them instead.
	man := exec.Command(filepath.Join(root, "one", "git-agency"), "man")
	man.Env = append(withoutEnv("SOURCE_DATE_EPOCH"), "SOURCE_DATE_EPOCH=86400")
	if out, err := man.Output(); err != nil || !strings.Contains(strings.SplitN(string(out), "\n", 2)[0], `"1970-01-02"`) {
		t.Errorf("git-agency man with SOURCE_DATE_EPOCH=86400: %v\n%.200s", err, out)
	}

	git := exec.Command("git", "log", "-1", "--format=%cd", "--date=format-local:%Y-%m-%d")
	git.Env = append(os.Environ(), "TZ=UTC")
	out, err := git.Output()
	if err != nil {
		t.Skipf("not a git checkout (%v): the pages are dated otherwise", err)
	}
	want := `"` + strings.TrimSpace(string(out)) + `"`
	if th, _, _ := strings.Cut(string(builds[0]["git-agency.1"]), "\n"); !strings.Contains(th, want) {
		t.Errorf("git-agency.1 is dated %q, want the commit's date %s", th, want)
	}
}
