package wall

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// wallFixture lays out a repository's git files as a wall sees them: the
// sandbox's own ref, an integration branch and another sandbox's ref in
// the same directory, and the sandbox's worktree git directory.
func wallFixture(t *testing.T) *Wall {
	t.Helper()
	root := t.TempDir()
	common := filepath.Join(root, "repo", ".git")
	for _, d := range []string{"objects", "lfs", "hooks", "info", "refs/heads/agency", "logs/refs/heads/agency", "worktrees/tree1", "worktrees/tree2"} {
		must(t, os.MkdirAll(filepath.Join(common, d), 0o755))
	}
	for _, f := range []string{"config", "refs/heads/main", "refs/heads/agency/sandbox-me", "refs/heads/agency/sandbox-other",
		"refs/heads/agency/feat-1", "logs/refs/heads/agency/sandbox-me", "worktrees/tree1/commondir", "worktrees/tree1/gitdir"} {
		must(t, os.WriteFile(filepath.Join(common, f), []byte("x\n"), 0o644))
	}
	sandbox := filepath.Join(root, "data", "sandboxes", "me", "tree")
	must(t, os.MkdirAll(sandbox, 0o755))
	must(t, os.WriteFile(filepath.Join(sandbox, ".git"), []byte("gitdir: "+filepath.Join(common, "worktrees", "tree1")+"\n"), 0o644))
	return &Wall{Sandbox: sandbox, GitDir: filepath.Join(common, "worktrees", "tree1"), CommonDir: common,
		Branch: "agency/sandbox-me", Visible: []string{filepath.Join(root, "data")}}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func grantMap(w *Wall) map[string]Access {
	m := map[string]Access{}
	for _, g := range w.grants() {
		m[g.Path] = g.Access
	}
	return m
}

// A commit on the sandbox's own branch is writable; every other branch
// in the same ref directory, the worktree's links and the repository's
// config and hooks are not.
func TestWallGrantsGitFiles(t *testing.T) {
	w := wallFixture(t)
	m := grantMap(w)
	c := w.CommonDir
	want := map[string]Access{
		w.Sandbox:                                             Writable,
		filepath.Join(w.Sandbox, ".git"):                      ReadOnly,
		w.GitDir:                                              Writable,
		filepath.Join(w.GitDir, "commondir"):                  ReadOnly,
		filepath.Join(w.GitDir, "gitdir"):                     ReadOnly,
		filepath.Join(c, "objects"):                           Writable,
		filepath.Join(c, "lfs"):                               Writable,
		filepath.Join(c, "refs/heads/agency"):                 Writable,
		filepath.Join(c, "refs/heads/agency/sandbox-other"):   ReadOnly,
		filepath.Join(c, "refs/heads/agency/feat-1"):          ReadOnly,
		filepath.Join(c, "logs/refs/heads/agency/sandbox-me"): Writable,
	}
	for p, a := range want {
		if m[p] != a {
			t.Errorf("%s: access %q, want %q", p, m[p], a)
		}
	}
	for _, p := range []string{"refs/heads/agency/sandbox-me", "refs/heads/main", "config", "hooks", "worktrees/tree2"} {
		if a, ok := m[filepath.Join(c, p)]; ok && a == Writable {
			t.Errorf("%s is writable", p)
		}
	}
}

// grants are mounted parents first: a read-only file over a writable
// directory comes after it, whatever order the rules made them in.
func TestWallGrantsParentsFirst(t *testing.T) {
	w := wallFixture(t)
	w.Extra = []string{filepath.Join(w.CommonDir, "refs", "heads", "agency", "feat-1")}
	seen := map[string]int{}
	for i, g := range w.grants() {
		for p, j := range seen {
			if inside(p, g.Path) && p != g.Path {
				t.Errorf("%s (at %d) is mounted before its parent %s (at %d)", p, j, g.Path, i)
			}
		}
		seen[g.Path] = i
	}
}

// The private /tmp hides everything in it but what is granted: a
// repository under /tmp stays visible, read-only.
func TestWallKeepsTmpRootsVisible(t *testing.T) {
	w := wallFixture(t)
	args := strings.Join(w.bwrapArgs(), " ")
	if !strings.Contains(args, "--tmpfs /tmp") {
		t.Fatalf("no private /tmp: %s", args)
	}
	if inside(w.CommonDir, "/tmp") && !strings.Contains(args, "--ro-bind "+w.CommonDir+" "+w.CommonDir) {
		t.Errorf("the repository under /tmp is not kept visible: %s", args)
	}
	if strings.Index(args, "--tmpfs /tmp") > strings.Index(args, "--bind "+w.Sandbox) {
		t.Errorf("the sandbox is mounted before the private /tmp: %s", args)
	}
}

// The sandbox must link to its own worktree git directory of this
// repository; anything else is refused.
func TestSandboxGitDirRefusesForeignLink(t *testing.T) {
	w := wallFixture(t)
	if got, err := SandboxGitDir(w.Sandbox, w.CommonDir); err != nil || got != w.GitDir {
		t.Fatalf("SandboxGitDir = %q, %v", got, err)
	}
	must(t, os.WriteFile(filepath.Join(w.Sandbox, ".git"), []byte("gitdir: /elsewhere/.git\n"), 0o644))
	if _, err := SandboxGitDir(w.Sandbox, w.CommonDir); err == nil {
		t.Fatal("a link to another git directory was accepted")
	}
}

// docs/wall.md's table names every rule of the grant list.
func TestWallDocNamesEveryGrant(t *testing.T) {
	b, err := os.ReadFile("../docs/wall.md")
	must(t, err)
	doc := string(b)
	w := wallFixture(t)
	w.Logs = t.TempDir()
	w.Caches = []string{t.TempDir()}
	w.AgentState = []string{t.TempDir()}
	w.Extra = []string{t.TempDir()}
	w.Hide = []string{t.TempDir()}
	w.Shadow = t.TempDir()
	must(t, os.MkdirAll(filepath.Join(w.Shadow, "objects", "info"), 0o755))
	must(t, os.WriteFile(filepath.Join(w.Shadow, "objects", "info", "alternates"), []byte(shadowAlternate), 0o644))
	whys := map[string]bool{}
	for _, g := range w.grants() {
		whys[g.Why] = true
	}
	if len(whys) < 14 {
		t.Errorf("only %d grant rules in the fixture: %v", len(whys), whys)
	}
	for _, g := range w.grants() {
		if !strings.Contains(doc, "| "+g.Why+" |") {
			t.Errorf("docs/wall.md does not name grant rule %q (%s)", g.Why, g.Path)
		}
	}
}

// A wall with a shadow git directory mounts it over the common git
// directory, the repository's store read-only inside it as its alternate,
// and the repository's config read-only; no ref of the repository is
// writable.
func TestWallShadowMounts(t *testing.T) {
	w := wallFixture(t)
	w.Shadow = t.TempDir()
	must(t, os.MkdirAll(filepath.Join(w.Shadow, "objects", "info"), 0o755))
	must(t, os.WriteFile(filepath.Join(w.Shadow, "objects", "info", "alternates"), []byte(shadowAlternate), 0o644))
	args := strings.Join(w.bwrapArgs(), " ")
	common := realPath(w.CommonDir)
	for _, want := range []string{
		"--bind " + w.Shadow + " " + common,
		"--ro-bind " + filepath.Join(common, "objects") + " " + filepath.Join(common, shadowBase),
		"--ro-bind " + filepath.Join(w.Shadow, "objects", "info", "alternates") + " " + filepath.Join(common, "objects", "info", "alternates"),
		"--ro-bind " + filepath.Join(common, "config") + " " + filepath.Join(common, "config"),
	} {
		if !strings.Contains(args, want) {
			t.Errorf("no %q in %s", want, args)
		}
	}
	if strings.Contains(args, "--bind "+filepath.Join(common, "refs")) || strings.Contains(args, "--bind "+filepath.Join(common, "objects")+" ") {
		t.Errorf("the repository's refs or objects are writable: %s", args)
	}
}

// Under network none the user's runtime directory is the wall's own
// (an empty tmpfs), mounted before the socket the user allows there,
// which is bound back; with the network shared it is left alone.
func TestWallRuntimeDirPrivateUnderNetworkNone(t *testing.T) {
	w := wallFixture(t)
	run := t.TempDir()
	allowed := filepath.Join(run, "agent.sock")
	ln := listenUnix(t, allowed)
	defer ln.Close()
	w.RuntimeDirs = []string{run}
	w.Visible = append(w.Visible, allowed)
	w.Sockets = []string{allowed}
	if a, ok := grantMap(w)[realPath(run)]; ok {
		t.Fatalf("network shared: the runtime directory is %s", a)
	}
	w.NoNetwork = true
	args := strings.Join(w.bwrapArgs(), " ")
	tmpfs := strings.Index(args, "--tmpfs "+realPath(run)+" ")
	back := strings.Index(args, "--ro-bind "+realPath(allowed)+" "+realPath(allowed))
	if tmpfs < 0 || back < tmpfs {
		t.Fatalf("want --tmpfs %s, then the allowed socket bound back; args: %s", run, args)
	}
}
