package gitcore

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestIgnoreMatcher(t *testing.T) {
	cases := []struct {
		patterns []string
		path     string
		isDir    bool
		want     bool
	}{
		{[]string{"*.bin"}, "a.bin", false, true},
		{[]string{"*.bin"}, "deep/er/a.bin", false, true},
		{[]string{"*.bin"}, "a.bin.txt", false, false},
		{[]string{"/*.bin"}, "deep/a.bin", false, false},
		{[]string{"/*.bin"}, "a.bin", false, true},
		{[]string{"build/"}, "build/out/x.o", false, true},
		{[]string{"build/"}, "src/build/x.o", false, true},
		{[]string{"build/"}, "build", false, false},
		{[]string{"data/*.csv"}, "data/a.csv", false, true},
		{[]string{"data/*.csv"}, "x/data/a.csv", false, false},
		{[]string{"data/*.csv"}, "data/sub/a.csv", false, false},
		{[]string{"**/cache"}, "a/b/cache/f", false, true},
		{[]string{"logs/**"}, "logs/a/b.txt", false, true},
		{[]string{"a/**/z"}, "a/z", false, true},
		{[]string{"a/**/z"}, "a/b/c/z", false, true},
		{[]string{"*.bin", "!keep.bin"}, "keep.bin", false, false},
		{[]string{"*.bin", "!keep.bin"}, "sub/other.bin", false, true},
		{[]string{"out/", "!out/keep.txt"}, "out/keep.txt", false, true}, // a directory cannot be re-included into
		{[]string{"f?.txt"}, "f1.txt", false, true},
		{[]string{"f?.txt"}, "f/.txt", false, false},
		{[]string{"f[0-9].txt"}, "f7.txt", false, true},
		{[]string{"f[!0-9].txt"}, "f7.txt", false, false},
		{[]string{"# comment", ""}, "# comment", false, false},
		{[]string{`\#hash`}, "#hash", false, true},
		{[]string{"trailing   "}, "trailing", false, true},
		{[]string{"*.BIN"}, "a.bin", false, false},
	}
	for _, c := range cases {
		if got := NewIgnoreMatcher(c.patterns).match(c.path, c.isDir); got != c.want {
			t.Errorf("%q matching %q (dir %v) = %v, want %v", c.patterns, c.path, c.isDir, got, c.want)
		}
	}
	if NewIgnoreMatcher(nil).match("x", false) {
		t.Error("no patterns matched something")
	}
}

// The matcher agrees with git's own check-ignore on the same patterns.
func TestIgnoreMatcherAgreesWithGit(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("HOME", dir)
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	patterns := []string{"*.bin", "!keep.bin", "/root.dat", "build/", "data/**/*.csv", "**/tmp", "x[ab]?.log"}
	paths := []string{"a.bin", "s/keep.bin", "s/a.bin", "root.dat", "s/root.dat", "build/o", "s/build/o",
		"data/a.csv", "data/b/c/a.csv", "s/data/a.csv", "tmp/x", "a/b/tmp/y", "xa1.log", "xc1.log", "plain.txt"}
	if out, err := exec.Command("git", "init", "-q", dir).CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	os.WriteFile(filepath.Join(dir, ".gitignore"), []byte(strings.Join(patterns, "\n")+"\n"), 0o644)
	cmd := exec.Command("git", "-C", dir, "check-ignore", "--no-index", "--stdin", "-z")
	cmd.Stdin = strings.NewReader(strings.Join(paths, "\x00") + "\x00")
	out, _ := cmd.Output()
	gitSays := map[string]bool{}
	for _, p := range strings.Split(string(out), "\x00") {
		gitSays[p] = p != ""
	}
	m := NewIgnoreMatcher(patterns)
	for _, p := range paths {
		if got := m.match(p, false); got != gitSays[p] {
			t.Errorf("%s: matcher says %v, git check-ignore %v", p, got, gitSays[p])
		}
	}
}

func TestLiteralIgnorePattern(t *testing.T) {
	for _, p := range []string{"a.txt", "dir/we*ird [1]?.bin", "#hash", "!bang", `back\slash`} {
		pat := LiteralIgnorePattern(p)
		m := NewIgnoreMatcher([]string{pat})
		if !m.match(p, false) {
			t.Errorf("%q (as %q) does not match itself", p, pat)
		}
		if m.match("other/"+p, false) || m.match(p+"x", false) {
			t.Errorf("%q (as %q) matches more than itself", p, pat)
		}
	}
}
