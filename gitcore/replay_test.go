package gitcore

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestDenied(t *testing.T) {
	pats := []string{".env", ".env.*", "*.key", "*.pem", "credentials.json", "secrets.json", "config/*.yml"}
	for p, want := range map[string]bool{
		".env": true, "sub/.env": true, ".env.local": true, "a/b/server.key": true, "cert.pem": true,
		"credentials.json": true, "x/secrets.json": true, "config/db.yml": true,
		"env": false, "main.go": false, "my.env": false, "keys.txt": false, "other/config/db.yml": false,
		// Case-insensitive filesystems: these are the same files.
		".ENV": true, "sub/.Env.Local": true, "Credentials.JSON": true, "A/Server.KEY": true, "CONFIG/db.YML": true,
	} {
		if got := Denied(p, pats); got != want {
			t.Errorf("Denied(%q) = %v, want %v", p, got, want)
		}
	}
}

func testRepo(t *testing.T) (*Repo, func(args ...string) string) {
	t.Helper()
	dir := t.TempDir()
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	t.Setenv("HOME", dir)
	git := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@t"}, args...)...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	git("init", "-q", "-b", "main")
	git("config", "user.name", "t")
	git("config", "user.email", "t@t")
	os.WriteFile(filepath.Join(dir, "a"), []byte("1\n2\n3\n"), 0o644)
	git("add", "a")
	git("commit", "-qm", "base")
	r, err := Discover(context.Background(), nil, dir)
	if err != nil {
		t.Fatal(err)
	}
	return r, git
}

// Replay is cherry-pick: changes land on a moved HEAD, a change already
// there is skipped, a conflicting one is reported without side effects.
func TestReplay(t *testing.T) {
	ctx := context.Background()
	r, git := testRepo(t)
	dir := r.Toplevel
	base := git("rev-parse", "HEAD")
	git("checkout", "-qb", "side")
	os.WriteFile(filepath.Join(dir, "a"), []byte("1\n2\nthree\n"), 0o644)
	git("commit", "-qam", "three")
	os.WriteFile(filepath.Join(dir, "b"), []byte("b\n"), 0o644)
	git("add", "b")
	git("commit", "-qm", "b")
	git("checkout", "-q", "main")
	os.WriteFile(filepath.Join(dir, "a"), []byte("one\n2\n3\n"), 0o644)
	git("commit", "-qam", "one")
	os.WriteFile(filepath.Join(dir, "b"), []byte("b\n"), 0o644)
	git("add", "b")
	git("commit", "-qm", "b already")
	head := git("rev-parse", "HEAD")

	commits, err := r.Commits(ctx, base, "side")
	if err != nil || len(commits) != 2 || commits[0].Subject != "three" {
		t.Fatalf("commits = %+v, %v", commits, err)
	}
	res, err := r.Replay(ctx, head, commits, Writer{User: true})
	if err != nil || res.Conflict != nil {
		t.Fatalf("%+v %v", res, err)
	}
	if len(res.Written) != 1 || len(res.Skipped) != 1 {
		t.Fatalf("written %v skipped %v", res.Written, res.Skipped)
	}
	if got := git("show", res.Tip+":a"); got != "one\n2\nthree" {
		t.Errorf("a = %q", got)
	}
	if got := git("log", "--format=%s|%an", "-1", res.Tip); got != "three|t" {
		t.Errorf("log = %q", got)
	}
	if git("rev-parse", "HEAD") != head {
		t.Error("HEAD moved")
	}

	os.WriteFile(filepath.Join(dir, "a"), []byte("ONE\n2\n3\n"), 0o644)
	git("commit", "-qam", "ONE")
	git("checkout", "-q", "side")
	os.WriteFile(filepath.Join(dir, "a"), []byte("uno\n2\nthree\n"), 0o644)
	git("commit", "-qam", "uno")
	git("checkout", "-q", "main")
	commits, _ = r.Commits(ctx, base, "side")
	res, err = r.Replay(ctx, git("rev-parse", "HEAD"), commits, Writer{User: true})
	if err != nil || res.Conflict == nil || res.Conflict.Commit.Subject != "uno" || strings.Join(res.Conflict.Files, ",") != "a" {
		t.Fatalf("%+v %v", res, err)
	}
	if st := git("status", "--porcelain"); st != "" {
		t.Errorf("status %q", st)
	}
}

// CreateRef never overwrites: an existing ref is ErrRefExists, found with
// show-ref rather than from git's wording.
func TestCreateRefExists(t *testing.T) {
	r, git := testRepo(t)
	ctx := context.Background()
	head := git("rev-parse", "HEAD")
	const ref = "refs/agency/snapshots/x/1"
	if ok, err := r.RefExists(ctx, ref); err != nil || ok {
		t.Fatalf("RefExists before = %v, %v", ok, err)
	}
	if err := r.CreateRef(ctx, ref, head); err != nil {
		t.Fatal(err)
	}
	if ok, err := r.RefExists(ctx, ref); err != nil || !ok {
		t.Fatalf("RefExists after = %v, %v", ok, err)
	}
	git("commit", "-q", "--allow-empty", "-m", "two")
	if err := r.CreateRef(ctx, ref, git("rev-parse", "HEAD")); !errors.Is(err, ErrRefExists) {
		t.Fatalf("CreateRef again: %v", err)
	}
	if got := git("rev-parse", ref); got != head {
		t.Fatalf("ref overwritten: %s", got)
	}
	if err := r.CreateRef(ctx, "refs/agency/bad..name", head); err == nil || errors.Is(err, ErrRefExists) {
		t.Fatalf("invalid ref: %v", err)
	}
}

// FastForward refuses to overwrite local changes and untracked files,
// naming them (BlockedError, decided from status, not git's wording), and
// keeps local changes to paths the fast-forward does not touch.
func TestFastForwardBlocked(t *testing.T) {
	r, git := testRepo(t)
	ctx := context.Background()
	dir := r.Toplevel
	from := git("rev-parse", "HEAD")
	os.WriteFile(filepath.Join(dir, "a"), []byte("1\n2\nTHREE\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "n"), []byte("new\n"), 0o644)
	git("add", "a", "n")
	git("commit", "-qm", "next")
	to := git("rev-parse", "HEAD")
	git("reset", "-q", "--hard", from)
	tree := r.Tree(dir)

	for _, c := range []struct{ name, file, content, want string }{
		{"tracked change", "a", "local\n", "a"},
		{"untracked file", "n", "mine\n", "n"},
	} {
		os.WriteFile(filepath.Join(dir, c.file), []byte(c.content), 0o644)
		err := tree.FastForward(ctx, from, to, "test")
		var be *BlockedError
		if !errors.As(err, &be) || len(be.Paths) != 1 || be.Paths[0] != c.want {
			t.Fatalf("%s: err = %v (%#v)", c.name, err, be)
		}
		if ExitCode(err) <= 0 {
			t.Errorf("%s: git's error lost: %v", c.name, err)
		}
		if head := git("rev-parse", "HEAD"); head != from {
			t.Fatalf("%s: HEAD moved", c.name)
		}
		if got, _ := os.ReadFile(filepath.Join(dir, c.file)); string(got) != c.content {
			t.Fatalf("%s: %s = %q", c.name, c.file, got)
		}
		git("reset", "-q", "--hard", from)
		os.Remove(filepath.Join(dir, "n"))
	}

	os.WriteFile(filepath.Join(dir, "other"), []byte("untouched\n"), 0o644)
	if err := tree.FastForward(ctx, from, to, "test"); err != nil {
		t.Fatal(err)
	}
	if head := git("rev-parse", "HEAD"); head != to {
		t.Fatalf("HEAD = %s, want %s", head, to)
	}
	if st := git("status", "--porcelain"); st != "?? other" {
		t.Fatalf("status = %q", st)
	}
}

// FastForward looks only at the paths it changes, yet still refuses an
// untracked file where it needs a directory (a leading directory of a new
// path), takes a tracked file that was only touched (its stat data is
// refreshed, its content unchanged) as clean, and leaves the index holding
// exactly the new tree with the untracked files elsewhere kept.
func TestFastForwardLeadingFileAndTouched(t *testing.T) {
	r, git := testRepo(t)
	ctx := context.Background()
	dir := r.Toplevel
	from := git("rev-parse", "HEAD")
	os.MkdirAll(filepath.Join(dir, "d", "e"), 0o755)
	os.WriteFile(filepath.Join(dir, "d", "e", "new"), []byte("new\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "a"), []byte("changed\n"), 0o644)
	git("add", "-A")
	git("commit", "-qm", "next")
	to := git("rev-parse", "HEAD")
	git("reset", "-q", "--hard", from)
	tree := r.Tree(dir)

	os.WriteFile(filepath.Join(dir, "d"), []byte("mine\n"), 0o644)
	err := tree.FastForward(ctx, from, to, "test")
	var be *BlockedError
	if !errors.As(err, &be) || len(be.Paths) != 1 || be.Paths[0] != "d" {
		t.Fatalf("untracked file at a leading directory: err = %v (%#v)", err, be)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "d")); string(got) != "mine\n" {
		t.Fatalf("d = %q", got)
	}
	os.Remove(filepath.Join(dir, "d"))

	// Touched: same content, new modification time.
	later := time.Now().Add(time.Hour)
	os.Chtimes(filepath.Join(dir, "a"), later, later)
	os.WriteFile(filepath.Join(dir, "keep"), []byte("untracked\n"), 0o644)
	if err := tree.FastForward(ctx, from, to, "test"); err != nil {
		t.Fatalf("touched file: %v", err)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "a")); string(got) != "changed\n" {
		t.Fatalf("a = %q", got)
	}
	if got := git("diff-index", "--cached", "--name-only", to); got != "" {
		t.Fatalf("index differs from the new tree: %q", got)
	}
	if st := git("status", "--porcelain"); st != "?? keep" {
		t.Fatalf("status = %q", st)
	}
}
