package wall

import (
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/git-agency/git-agency/internal/testenv"
	"github.com/git-agency/git-agency/internal/testrepo"
)

// containerRecipe is the script between the container-recipe markers of
// docs/wall.md.
func containerRecipe(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("../docs/wall.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, _ := strings.Cut(string(b), "<!-- container-recipe: begin -->")
	block, _, _ := strings.Cut(rest, "<!-- container-recipe: end -->")
	_, code, ok := strings.Cut(block, "```bash\n")
	code, _, ok2 := strings.Cut(code, "```")
	if !ok || !ok2 {
		t.Fatal("docs/wall.md has no container recipe between its markers")
	}
	return code
}

// The container recipe of docs/wall.md mounts exactly what the wall grants
// in the repository and the sandbox: the same paths, each writable or
// read-only alike. Run with an engine that prints its arguments.
func TestContainerRecipeMatchesWall(t *testing.T) {
	testenv.Need(t, "bash")
	// Under /tmp, which the wall makes private: every read-only path of
	// the repository is then one of its grants, as in a container.
	dir, err := os.MkdirTemp("/tmp", "agency-recipe-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	t.Setenv("HOME", dir)
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	t.Setenv("GIT_CONFIG_GLOBAL", filepath.Join(dir, "gitconfig"))
	repo := filepath.Join(dir, "repo")
	os.MkdirAll(repo, 0o755)
	testrepo.Git(t, repo, "init", "-q", "-b", "main")
	testrepo.Git(t, repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "init")
	testrepo.Git(t, repo, "config", "user.name", "t")
	testrepo.Git(t, repo, "config", "user.email", "t@t")
	os.MkdirAll(filepath.Join(repo, ".git", "info"), 0o755)
	// An integration branch and another sandbox's branch beside ours, in
	// the same ref directory; a deeper ref there; a packed ref.
	for _, b := range []string{"agency/feat-1a2b", "agency/sandbox-other", "agency/deep/er"} {
		testrepo.Git(t, repo, "branch", b)
	}
	testrepo.Git(t, repo, "pack-refs", "--all")
	testrepo.Git(t, repo, "branch", "agency/feat-loose")
	sb := filepath.Join(dir, "data", "sandboxes", testInv, "tree")
	testrepo.Git(t, repo, "worktree", "add", "-q", "-b", "agency/sandbox-"+testInv, sb)
	common := realPath(filepath.Join(repo, ".git"))
	gitDir, err := SandboxGitDir(sb, common)
	if err != nil {
		t.Fatal(err)
	}

	w := &Wall{Sandbox: sb, GitDir: gitDir, CommonDir: common, Branch: "agency/sandbox-" + testInv}
	want := map[string]Access{}
	for _, g := range w.grants() {
		want[g.Path] = g.Access
	}

	script := filepath.Join(dir, "agency-container")
	engine := filepath.Join(dir, "engine")
	if err := os.WriteFile(script, []byte(containerRecipe(t)), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(engine, []byte("#!/bin/sh\nprintf '%s\\n' \"$@\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(script, sb, gitDir, common, "image", "true")
	cmd.Env = append(os.Environ(), "ENGINE="+engine)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("the recipe: %v", err)
	}
	args := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	got := map[string]Access{}
	for i := 0; i+1 < len(args); i++ {
		if args[i] != "-v" {
			continue
		}
		spec := args[i+1]
		access := Writable
		if m, ok := strings.CutSuffix(spec, ":ro"); ok {
			spec, access = m, ReadOnly
		}
		src, dst, _ := strings.Cut(spec, ":")
		if src != dst {
			t.Errorf("%s is mounted at %s, not at its own path", src, dst)
		}
		got[src] = access
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("the recipe mounts\n%s\nthe wall grants\n%s", show(got), show(want))
	}
}

func show(m map[string]Access) string {
	var lines []string
	for p, a := range m {
		lines = append(lines, string(a)+" "+p)
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}
