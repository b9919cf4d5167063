package gitcore

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/git-agency/git-agency/gitcore/internal/configfile"
)

// gitIn runs git in dir with the test's environment (t.Setenv'd).
func gitIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@t", "-c", "protocol.file.allow=always"}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// discoverEnv is a private HOME and no system file.
func discoverEnv(t *testing.T) string {
	t.Helper()
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", "")
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	// The global files are HOME's here: a GIT_CONFIG_GLOBAL (testenv.Main
	// sets one, and so may the developer) would replace them.
	t.Setenv("GIT_CONFIG_GLOBAL", "")
	os.Unsetenv("GIT_CONFIG_GLOBAL")
	return home
}

// sameAsGit checks that discovery from files finds what git finds from
// dir, and that the configuration read from files is git's.
func sameAsGit(t *testing.T, dir string) *Repo {
	t.Helper()
	ctx := context.Background()
	files, ok := discoverFromFiles(ExecRunner{}, dir)
	if !ok {
		t.Fatalf("%s: not discovered from files", dir)
	}
	viaGit, err := discoverWithGit(ctx, ExecRunner{}, dir)
	if err != nil {
		t.Fatal(err)
	}
	if files.GitDir != viaGit.GitDir || files.CommonDir != viaGit.CommonDir || files.Toplevel != viaGit.Toplevel {
		t.Fatalf("%s: from files %q %q %q, git says %q %q %q", dir, files.GitDir, files.CommonDir, files.Toplevel,
			viaGit.GitDir, viaGit.CommonDir, viaGit.Toplevel)
	}
	if _, ok := configfile.Files(files.GitDir, files.CommonDir); !ok {
		t.Fatalf("%s: configuration not read from files", dir)
	}
	got, err := files.Config(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want, err := viaGit.Config(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s: config from files %q, git says %q", dir, got, want)
	}
	return files
}

func newTestRepo(t *testing.T, dir string) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	gitIn(t, dir, "init", "-q", "-b", "main")
	write(t, dir, "sub/deep/a.txt", "a\n")
	gitIn(t, dir, "add", "-A")
	gitIn(t, dir, "commit", "-qm", "base")
	return dir
}

// The repository is found from files, as git finds it, from the top, a
// subdirectory, a path through a symlink, a linked worktree and a tree
// whose git directory is elsewhere (--separate-git-dir).
func TestDiscoverFromFilesAgreesWithGit(t *testing.T) {
	discoverEnv(t)
	base := t.TempDir()
	repo := newTestRepo(t, filepath.Join(base, "repo"))
	gitIn(t, repo, "config", "agency.runner.sh.command", "sh")
	sameAsGit(t, repo)
	sameAsGit(t, filepath.Join(repo, "sub", "deep"))
	if err := os.Symlink(filepath.Join(repo, "sub"), filepath.Join(base, "link")); err != nil {
		t.Fatal(err)
	}
	if r := sameAsGit(t, filepath.Join(base, "link", "deep")); r.Toplevel != repo {
		t.Fatalf("Toplevel %q through a symlink, want %q", r.Toplevel, repo)
	}
	wt := filepath.Join(base, "wt")
	gitIn(t, repo, "worktree", "add", "-q", "-b", "other", wt)
	if r := sameAsGit(t, filepath.Join(wt, "sub")); r.CommonDir != filepath.Join(repo, ".git") || r.Toplevel != wt {
		t.Fatalf("linked worktree: %+v", r)
	}
	sep := filepath.Join(base, "sep")
	gitIn(t, base, "init", "-q", "--separate-git-dir", filepath.Join(base, "sep.git"), sep)
	if r := sameAsGit(t, sep); r.GitDir != filepath.Join(base, "sep.git") {
		t.Fatalf("separate git dir: %+v", r)
	}
}

// Whatever the files cannot say as git would is left to git: what git was
// told in the environment, a bare repository, the inside of .git,
// core.worktree, core.bare, an unknown extension, a broken gitfile, a
// directory outside any repository.
func TestDiscoverFromFilesLeavesToGit(t *testing.T) {
	discoverEnv(t)
	base := t.TempDir()
	repo := newTestRepo(t, filepath.Join(base, "repo"))
	no := func(dir string) {
		t.Helper()
		if r, ok := discoverFromFiles(ExecRunner{}, dir); ok {
			t.Fatalf("%s: discovered from files (%+v), want git asked", dir, r)
		}
	}
	for _, k := range []string{"GIT_DIR", "GIT_WORK_TREE", "GIT_COMMON_DIR", "GIT_CEILING_DIRECTORIES"} {
		t.Run(k, func(t *testing.T) {
			t.Setenv(k, filepath.Join(repo, ".git"))
			no(repo)
		})
	}
	no(filepath.Join(repo, ".git"))
	no(filepath.Join(repo, ".git", "refs"))
	bare := filepath.Join(base, "bare.git")
	gitIn(t, base, "init", "-q", "--bare", bare)
	no(bare)
	no(base)

	other := newTestRepo(t, filepath.Join(base, "other"))
	gitIn(t, other, "config", "core.worktree", other)
	no(other)
	gitIn(t, other, "config", "--unset", "core.worktree")
	cfg := filepath.Join(other, ".git", "config")
	plain := readFile(t, cfg)
	write(t, other, ".git/config", plain+"[core]\n\trepositoryformatversion = 1\n[extensions]\n\tsomeday = true\n")
	no(other)
	write(t, other, ".git/config", plain+"[core]\n\trepositoryformatversion = 2\n")
	no(other)
	write(t, other, ".git/config", plain+"[core]\n\tbare = true\n")
	no(other)
	write(t, other, ".git/config", plain)
	if _, ok := discoverFromFiles(ExecRunner{}, other); !ok {
		t.Fatal("plain repository not discovered from files")
	}

	broken := filepath.Join(base, "broken")
	write(t, broken, ".git", "gitdir: "+filepath.Join(base, "nowhere")+"\n")
	no(broken)
}

// The configuration read from files is git's: every syntax git accepts in
// a config file, in system, global, repository and worktree files, in
// git's order; agency.* and rerere.enabled only.
func TestConfigFromFilesAgreesWithGit(t *testing.T) {
	home := discoverEnv(t)
	base := t.TempDir()
	repo := newTestRepo(t, filepath.Join(base, "repo"))
	zoo := "# a comment\n; another\n[agency]\n\tdataDir = /tmp/x ; a comment\n" +
		"[Agency \"runner.Sh\"]\n  Command = \"sh  -c\" # spaces kept in quotes\n" +
		"\theadlessArg=-c\n\tflag\n\tempty =\n\tesc = a\\tb\\\\c\\\"d\\n\n" +
		"\tlong = one \\\n two\r\n[agency.Legacy]\n\tKey = v1\n[agency \"q\\\"uote\"] k = inline\n" +
		"[rerere]\n\tenabled\n[rerere]\n\tautoUpdate = true\n[agency]\n\tmulti = 1\n\tmulti = 2\n" +
		"\tmid =  a   b   c  \t\n"
	write(t, repo, ".git/config", readFile(t, filepath.Join(repo, ".git", "config"))+zoo)
	write(t, home, ".gitconfig", "\ufeff[agency]\n\tmulti = 0\n\tglobal = yes\n")
	write(t, home, ".config/git/config", "[agency]\n\txdg = 1\n")
	sys := filepath.Join(base, "system")
	write(t, sys, "gitconfig", "[agency \"system\"]\n\tkey = s\n")
	t.Setenv("GIT_CONFIG_NOSYSTEM", "")
	t.Setenv("GIT_CONFIG_SYSTEM", filepath.Join(sys, "gitconfig"))
	r := sameAsGit(t, repo)
	if got, _ := NewConfig(mustConfig(t, r)).Get("agency.runner.Sh.command"); got != "sh  -c" {
		t.Fatalf("agency.runner.Sh.command = %q", got)
	}

	// worktreeConfig: the worktree's own file comes last.
	wt := filepath.Join(base, "wt")
	gitIn(t, repo, "worktree", "add", "-q", "-b", "other", wt)
	gitIn(t, repo, "config", "extensions.worktreeConfig", "true")
	gitIn(t, wt, "config", "--worktree", "agency.maxActive", "3")
	gitIn(t, repo, "config", "--worktree", "agency.maxActive", "5")
	if got, _ := NewConfig(mustConfig(t, sameAsGit(t, wt))).Get("agency.maxActive"); got != "3" {
		t.Fatalf("agency.maxActive in the worktree = %q, want 3", got)
	}
	sameAsGit(t, repo)

	// GIT_CONFIG_GLOBAL replaces both global files.
	write(t, base, "global", "[agency]\n\tonly = here\n")
	t.Setenv("GIT_CONFIG_GLOBAL", filepath.Join(base, "global"))
	sameAsGit(t, repo)
}

func mustConfig(t *testing.T, r *Repo) []ConfigEntry {
	t.Helper()
	entries, err := r.Config(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return entries
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Configuration the files cannot give as git would is asked of git: an
// include, `git -c` (GIT_CONFIG_PARAMETERS), a file git rejects, a git
// not installed under /usr without GIT_CONFIG_NOSYSTEM. Git's answer is
// what Config returns then.
func TestConfigFromFilesLeavesToGit(t *testing.T) {
	discoverEnv(t)
	base := t.TempDir()
	repo := newTestRepo(t, filepath.Join(base, "repo"))
	r, ok := discoverFromFiles(ExecRunner{}, repo)
	if !ok {
		t.Fatal("not discovered from files")
	}
	no := func(what string) {
		t.Helper()
		if all, ok := configfile.Files(r.GitDir, r.CommonDir); ok {
			t.Fatalf("%s: read from files (%q), want git asked", what, all)
		}
	}
	write(t, base, "inc", "[agency]\n\tincluded = 1\n")
	gitIn(t, repo, "config", "include.path", filepath.Join(base, "inc"))
	no("include.path")
	if got, _ := NewConfig(mustConfig(t, r)).Get("agency.included"); got != "1" {
		t.Fatalf("agency.included = %q: the include was not followed", got)
	}
	gitIn(t, repo, "config", "--unset", "include.path")
	gitIn(t, repo, "config", "includeIf.gitdir:"+repo+"/.path", filepath.Join(base, "inc"))
	no("includeIf")
	gitIn(t, repo, "config", "--remove-section", "includeIf.gitdir:"+repo+"/")

	t.Setenv("GIT_CONFIG_PARAMETERS", "'agency.cli'='1'")
	no("GIT_CONFIG_PARAMETERS")
	t.Setenv("GIT_CONFIG_PARAMETERS", "")
	os.Unsetenv("GIT_CONFIG_PARAMETERS")

	t.Setenv("GIT_CONFIG_NOSYSTEM", "")
	t.Setenv("PATH", t.TempDir()+string(os.PathListSeparator)+os.Getenv("PATH"))
	if !configfile.GitUnderUsr() {
		no("system file of a git elsewhere")
	}
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	if _, ok := configfile.Files(r.GitDir, r.CommonDir); !ok {
		t.Fatal("plain configuration not read from files")
	}
	for _, bad := range []string{"[agency]\n\tx = \"open\n", "[agency\n", "[agency]\n\tx = a\\qb\n", "x = 1\n", "[agency]\n\t1x = 1\n", "[a]\n\tx = 1\x00\n"} {
		write(t, base, "bad", bad)
		t.Setenv("GIT_CONFIG_GLOBAL", filepath.Join(base, "bad"))
		no("bad file " + bad)
	}
}

// parseConfigFile follows git's parser on what is easy to get wrong.
func TestParseConfigFile(t *testing.T) {
	got, ok := configfile.Parse([]byte("[a \"B\\\\c\"]x=1\n[A.B]Y = \"  q\"  r ;c\n[a]z\n"))
	want := []ConfigEntry{{Key: "a.B\\c.x", Value: "1"}, {Key: "a.b.y", Value: "  q  r"}, {Key: "a.z"}}
	if !ok || !reflect.DeepEqual(got, want) {
		t.Fatalf("parseConfigFile = %q, %v; want %q", got, ok, want)
	}
}

// A gitfile naming its git directory through a symlink and "..": git
// takes the ".." from where the link led, so the repository is the one
// there, not the one a lexical join names (both exist here).
func TestDiscoverFromFilesGitfileThroughSymlink(t *testing.T) {
	discoverEnv(t)
	base := t.TempDir()
	if err := os.MkdirAll(filepath.Join(base, "real", "deep"), 0o755); err != nil {
		t.Fatal(err)
	}
	gitIn(t, base, "init", "-q", "--separate-git-dir", filepath.Join(base, "real", "sep.git"), filepath.Join(base, "t1"))
	gitIn(t, base, "init", "-q", "--separate-git-dir", filepath.Join(base, "sep.git"), filepath.Join(base, "t2"))
	if err := os.Symlink(filepath.Join(base, "real", "deep"), filepath.Join(base, "link")); err != nil {
		t.Fatal(err)
	}
	write(t, base, "tree/.git", "gitdir: ../link/../sep.git\n")
	if r := sameAsGit(t, filepath.Join(base, "tree")); r.GitDir != filepath.Join(base, "real", "sep.git") {
		t.Fatalf("GitDir %q", r.GitDir)
	}
}

// A directory that is a linked worktree's git directory (its objects are
// in the common directory its commondir names) is a git directory to git,
// which stops there: discovery from files does not walk on up to a work
// tree around it.
func TestDiscoverFromFilesStopsAtWorktreeGitDir(t *testing.T) {
	discoverEnv(t)
	base := t.TempDir()
	outer := newTestRepo(t, filepath.Join(base, "outer"))
	other := newTestRepo(t, filepath.Join(base, "other"))
	gitIn(t, other, "worktree", "add", "-q", filepath.Join(base, "owt"))
	moved := filepath.Join(outer, "x")
	if err := os.Rename(filepath.Join(other, ".git", "worktrees", "owt"), moved); err != nil {
		t.Fatal(err)
	}
	write(t, outer, "x/commondir", filepath.Join(other, ".git")+"\n")
	if r, ok := discoverFromFiles(ExecRunner{}, moved); ok {
		t.Fatalf("discovered %+v from files inside a git directory, want git asked", r)
	}
}

// What the files say differently from git, or from one git version to the
// next, is asked of git: GIT_CONFIG_NOSYSTEM with GIT_CONFIG_SYSTEM (no
// system file at all), an empty HOME, a relative path in GIT_CONFIG_GLOBAL,
// GIT_CONFIG_SYSTEM, HOME or XDG_CONFIG_HOME (git's is from the directory
// it runs in), a tab between a value's words.
func TestConfigFromFilesExactOrGit(t *testing.T) {
	discoverEnv(t)
	base := t.TempDir()
	repo := newTestRepo(t, filepath.Join(base, "repo"))
	write(t, base, "system", "[agency]\n\tsystem = s\n")
	t.Setenv("GIT_CONFIG_SYSTEM", filepath.Join(base, "system"))
	sameAsGit(t, repo)
	if got, _ := NewConfig(mustConfig(t, sameAsGit(t, repo))).Get("agency.system"); got != "" {
		t.Fatalf("agency.system = %q from a system file GIT_CONFIG_NOSYSTEM turns off", got)
	}

	r, _ := discoverFromFiles(ExecRunner{}, repo)
	for k, v := range map[string]string{"HOME": "", "GIT_CONFIG_GLOBAL": "rel/gitconfig", "XDG_CONFIG_HOME": "rel",
		"GIT_CONFIG_SYSTEM": "rel/system"} {
		t.Run(k, func(t *testing.T) {
			t.Setenv(k, v)
			if all, ok := configfile.Files(r.GitDir, r.CommonDir); ok {
				t.Fatalf("%s=%q: read from files (%q), want git asked", k, v, all)
			}
		})
	}

	for _, v := range []string{"a\tb", "a \t b", "a\t\"b\"", "a \\\n\tb"} {
		if got, ok := configfile.Parse([]byte("[s]\n\tk = " + v + "\n")); ok {
			t.Errorf("value %q: parsed as %q, want git asked", v, got)
		}
	}
	got, ok := configfile.Parse([]byte("[s]\n\tk = \ta  b\t \n\tl = \"a\tb\"\t# c\n"))
	if want := []ConfigEntry{{Key: "s.k", Value: "a  b"}, {Key: "s.l", Value: "a\tb"}}; !ok || !reflect.DeepEqual(got, want) {
		t.Fatalf("parseConfigFile = %q, %v; want %q", got, ok, want)
	}
}
