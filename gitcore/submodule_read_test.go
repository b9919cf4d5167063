package gitcore

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// A submodule's files are read, never run: Tree.Status says of each
// submodule what git's own status with --ignore-submodules=none says (the
// oracle), for a clean one, a changed, deleted, touched, untracked or
// ignored file, a nested submodule with changes and a new commit; and the
// clean filter the submodule's own configuration names never runs.
func TestSubmoduleStatusReadsFiles(t *testing.T) {
	ctx := context.Background()
	r, git := testRepo(t)
	top := r.Toplevel
	for _, name := range []string{"s1", "s2", "s3", "s4", "s5", "s6", "s7", "s8"} {
		makeSubmodule(t, git, top, name)
	}
	gitIn(t, filepath.Join(top, "s6"), "-c", "protocol.file.allow=always", "submodule", "add", "-q", makeSource(t, "inner"), "inner")
	gitIn(t, filepath.Join(top, "s6"), "commit", "-qm", "inner")
	git("add", "-A")
	git("commit", "-qm", "subs")
	marker := filepath.Join(t.TempDir(), "ran")
	for _, name := range []string{"s1", "s2", "s3"} {
		gitIn(t, filepath.Join(top, name), "config", "filter.x.clean", "sh -c 'touch "+marker+"; cat'")
		info := filepath.Join(gitIn(t, filepath.Join(top, name), "rev-parse", "--absolute-git-dir"), "info")
		os.MkdirAll(info, 0o755)
		writeFile(t, filepath.Join(info, "attributes"), "* filter=x\n")
	}
	// s1 clean; s2 a file changed; s3 touched only
	writeFile(t, filepath.Join(top, "s2", "f"), "changed\n")
	later := time.Now().Add(time.Minute)
	os.Chtimes(filepath.Join(top, "s3", "f"), later, later)
	writeFile(t, filepath.Join(top, "s4", "new"), "untracked\n") // s4 untracked
	writeFile(t, filepath.Join(top, "s5", ".gitignore"), "*.log\n")
	gitIn(t, filepath.Join(top, "s5"), "add", ".gitignore")
	gitIn(t, filepath.Join(top, "s5"), "commit", "-qm", "ignore")
	git("add", "s5")
	git("commit", "-qm", "s5")
	writeFile(t, filepath.Join(top, "s5", "x.log"), "ignored\n")                   // s5: only ignored
	writeFile(t, filepath.Join(top, "s6", "inner", "f"), "changed\n")              // s6: nested dirt
	os.Remove(filepath.Join(top, "s7", "f"))                                       // s7: deleted
	gitIn(t, filepath.Join(top, "s8"), "commit", "-q", "--allow-empty", "-m", "n") // s8: new commit,
	writeFile(t, filepath.Join(top, "s8", "g"), "untracked\n")                     // and untracked

	got, err := r.Tree(top).Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the submodule's filter ran")
	}
	want, err := parseStatusV2([]byte(git("status", "--porcelain=v2", "-z", "--untracked-files=all", "--ignore-submodules=none")))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(marker); err != nil {
		t.Fatal("the oracle did not run the filter: the test proves nothing")
	}
	subs := func(st []StatusEntry) map[string]string {
		m := map[string]string{}
		for _, e := range st {
			if e.Kind == StatusChanged && len(e.Sub) == 4 && e.Sub[0] == 'S' {
				m[e.Path] = e.XY + " " + e.Sub
			}
		}
		return m
	}
	g, w := subs(got), subs(want)
	for _, name := range []string{"s1", "s2", "s3", "s4", "s5", "s6", "s7", "s8"} {
		if g[name] != w[name] {
			t.Errorf("%s: %q, git says %q", name, g[name], w[name])
		}
	}
	if len(w) != 5 {
		t.Errorf("git's own status: %v; want s2, s4, s6, s7, s8", w)
	}
}

// makeSource makes a repository with one commit of file f, to be added
// as a submodule; it returns its path.
func makeSource(t *testing.T, name string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), name)
	gitIn(t, t.TempDir(), "init", "-q", "-b", "main", dir)
	writeFile(t, filepath.Join(dir, "f"), "one\n")
	gitIn(t, dir, "add", "f")
	gitIn(t, dir, "commit", "-qm", "one")
	return dir
}

// makeSubmodule adds a submodule name (cloned under .git/modules) to the
// repository at top.
func makeSubmodule(t *testing.T, git func(...string) string, top, name string) {
	t.Helper()
	git("-c", "protocol.file.allow=always", "submodule", "add", "-q", makeSource(t, name), name)
}

func writeFile(t *testing.T, p, s string) {
	t.Helper()
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

// The user's core.excludesFile (here ~/agent-ignore, from the global
// configuration) hides a submodule's untracked file from the files
// reader as from git's own status; the submodule's own configuration,
// which an agent can write, is not read.
func TestSubmoduleUntrackedReadsUserExcludesFile(t *testing.T) {
	ctx := context.Background()
	r, git := testRepo(t)
	top := r.Toplevel
	home := t.TempDir()
	t.Setenv("HOME", home)
	global := filepath.Join(home, "gitconfig")
	writeFile(t, global, "[core]\n\texcludesFile = ~/agent-ignore\n")
	t.Setenv("GIT_CONFIG_GLOBAL", global)
	writeFile(t, filepath.Join(home, "agent-ignore"), "*.log\n")
	for _, name := range []string{"s1", "s2", "s3"} {
		makeSubmodule(t, git, top, name)
	}
	git("commit", "-qm", "subs")
	writeFile(t, filepath.Join(top, "s1", "x.log"), "ignored by the user\n")
	writeFile(t, filepath.Join(top, "s2", "x.txt"), "untracked\n")
	gitIn(t, filepath.Join(top, "s3"), "config", "core.excludesFile", filepath.Join(home, "agent-ignore2"))
	writeFile(t, filepath.Join(home, "agent-ignore2"), "*.tmp\n")
	writeFile(t, filepath.Join(top, "s3", "x.tmp"), "the agent's own excludes file\n")

	got, err := r.Tree(top).Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	subs := map[string]string{}
	for _, e := range got {
		if e.Kind == StatusChanged && len(e.Sub) == 4 {
			subs[e.Path] = e.Sub
		}
	}
	if subs["s1"] != "" {
		t.Errorf("s1 holds only a file the user's excludes file ignores: %q", subs["s1"])
	}
	if subs["s2"] != "S..U" {
		t.Errorf("s2 holds an untracked file: %q", subs["s2"])
	}
	if subs["s3"] != "S..U" {
		t.Errorf("s3's own core.excludesFile was read: %q", subs["s3"])
	}
	if out := git("status", "--porcelain=v2", "--ignore-submodules=none", "--", "s1"); out != "" {
		t.Fatalf("git's own status disagrees on s1: %s", out)
	}
}
