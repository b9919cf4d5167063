package subproc

import (
	"bytes"
	"regexp"
	"slices"
	"testing"
)

func TestScrub(t *testing.T) {
	env := []string{
		"PATH=/bin", "HOME=/home/u",
		"GIT_DIR=/r/.git", "GIT_WORK_TREE=/r", "GIT_INDEX_FILE=/r/.git/index", "GIT_PREFIX=sub/",
		"GIT_COMMON_DIR=/r/.git", "GIT_OBJECT_DIRECTORY=/o", "GIT_EXEC_PATH=/usr/lib/git-core",
		"GIT_CONFIG_PARAMETERS='a.b'='c'", "GIT_CONFIG_COUNT=1",
		"TMUX=/tmp/tmux-1/other,1,0", "TMUX_PANE=%3", "TMUX_TMPDIR=/t",
		"LC_ALL=de_DE", "KEEP=GIT_DIR=x",
	}
	orig := slices.Clone(env)
	got := Scrub(env, []string{"LC_ALL"}, "LC_ALL=C")
	want := []string{
		"PATH=/bin", "HOME=/home/u",
		"GIT_CONFIG_PARAMETERS='a.b'='c'", "GIT_CONFIG_COUNT=1",
		"TMUX_TMPDIR=/t", "KEEP=GIT_DIR=x", "LC_ALL=C",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("Scrub:\n got %q\nwant %q", got, want)
	}
	if !slices.Equal(env, orig) {
		t.Fatalf("Scrub modified its input: %q", env)
	}
	if !IsRepoVar("GIT_DIR") || IsRepoVar("GIT_CONFIG_PARAMETERS") {
		t.Fatal("IsRepoVar")
	}
}

func TestTrace(t *testing.T) {
	var b bytes.Buffer
	TraceTo(&b, false, []string{"git", "status"})()
	if b.Len() != 0 {
		t.Fatalf("trace off printed %q", b.String())
	}
	TraceTo(&b, true, []string{"/usr/bin/git", "-C", "/a b", "commit", "-m", "x\ny", "", "ünï", `^agency\.`, "it's", "%(refname)"})()
	re := regexp.MustCompile(`^agency-trace: \d+\.\d{3}s git -C '/a b' commit -m "x\\ny" '' ünï '\^agency\\\.' 'it'\\''s' '%\(refname\)'\n$`)
	if !re.MatchString(b.String()) {
		t.Fatalf("trace line %q", b.String())
	}
}

// A program the user drives loses only git's repository variables.
func TestScrubRepo(t *testing.T) {
	env := []string{"PATH=/bin", "GIT_DIR=/r/.git", "GIT_WORK_TREE=/r", "GIT_EXEC_PATH=/usr/lib/git-core",
		"GIT_CONFIG_PARAMETERS='a.b'='c'", "TMUX=/tmp/tmux-1/default,1,0", "TMUX_PANE=%3"}
	got := ScrubRepo(env)
	want := []string{"PATH=/bin", "GIT_CONFIG_PARAMETERS='a.b'='c'", "TMUX=/tmp/tmux-1/default,1,0", "TMUX_PANE=%3"}
	if !slices.Equal(got, want) {
		t.Fatalf("ScrubRepo:\n got %q\nwant %q", got, want)
	}
}
