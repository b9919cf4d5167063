package gitcore

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/git-agency/git-agency/internal/testrepo"
)

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir,
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

func write(t *testing.T, dir, name, content string) {
	t.Helper()
	testrepo.Write(t, dir, name, content)
}

func snapRepo(t *testing.T) (*Repo, string) {
	t.Helper()
	dir := t.TempDir()
	t.Setenv("HOME", dir)
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	git(t, dir, "init", "-q", "-b", "main")
	write(t, dir, "tracked.txt", "one\n")
	write(t, dir, ".env.example", "A=1\n")
	write(t, dir, "gone.txt", "bye\n")
	write(t, dir, ".gitignore", "build/\n")
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "-q", "-m", "init")
	repo, err := Discover(context.Background(), nil, dir)
	if err != nil {
		t.Fatal(err)
	}
	return repo, dir
}

func treeFiles(t *testing.T, dir, tree string) map[string]string {
	files := map[string]string{}
	for _, line := range strings.Split(git(t, dir, "ls-tree", "-z", "-r", tree), "\x00") {
		if line == "" {
			continue
		}
		meta, path, _ := strings.Cut(line, "\t")
		f := strings.Fields(meta)
		files[path] = git(t, dir, "cat-file", "blob", f[2])
	}
	return files
}

func TestSnapshotTree(t *testing.T) {
	repo, dir := snapRepo(t)
	ctx := context.Background()
	write(t, dir, "tracked.txt", "two\n")
	write(t, dir, ".env.example", "A=2\n")
	os.Remove(filepath.Join(dir, "gone.txt"))
	write(t, dir, "new dir/ünï code.txt", "new\n")
	write(t, dir, "build/out.o", "ignored\n")
	write(t, dir, ".agency/state/x", "private\n")
	write(t, dir, ".agency/keep", "private\n") // not ignored by anything: Exclude keeps it out
	statusBefore := git(t, dir, "status", "--porcelain")
	indexBefore, _ := os.ReadFile(filepath.Join(dir, ".git", "index"))

	snap, err := repo.Tree(dir).SnapshotTree(ctx, SnapshotRequest{IncludeUntracked: true,
		Denylist: []string{".env", ".env.*", "*.key"}, Exclude: []string{".agency"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(snap.Denied) != 0 || snap.Tree == "" || snap.Head != git(t, dir, "rev-parse", "HEAD") {
		t.Fatalf("snapshot %+v", snap)
	}
	got := treeFiles(t, dir, snap.Tree)
	want := map[string]string{"tracked.txt": "two", ".env.example": "A=2", ".gitignore": "build/",
		"new dir/ünï code.txt": "new"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("tree files %v, want %v", got, want)
	}
	indexAfter, _ := os.ReadFile(filepath.Join(dir, ".git", "index"))
	if string(indexBefore) != string(indexAfter) || git(t, dir, "status", "--porcelain") != statusBefore ||
		git(t, dir, "rev-parse", "HEAD") != snap.Head {
		t.Error("the worktree's index or status changed")
	}

	// Tracked only.
	snap, err = repo.Tree(dir).SnapshotTree(ctx, SnapshotRequest{Denylist: []string{".env"}, Exclude: []string{".agency"}})
	if err != nil {
		t.Fatal(err)
	}
	got = treeFiles(t, dir, snap.Tree)
	want = map[string]string{"tracked.txt": "two", ".env.example": "A=2", ".gitignore": "build/"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("tracked-only files %v, want %v", got, want)
	}
}

func TestSnapshotTreeDenylist(t *testing.T) {
	repo, dir := snapRepo(t)
	ctx := context.Background()
	write(t, dir, ".env", "SECRET=root-secret-value\n")
	write(t, dir, "sub/deep/server.key", "KEY=deep-secret-value\n")
	write(t, dir, "conf/secret.yml", "anchored-secret-value\n")
	write(t, dir, "fine.txt", "fine\n")
	snap, err := repo.Tree(dir).SnapshotTree(ctx, SnapshotRequest{IncludeUntracked: true,
		Denylist: []string{".env", "*.key", "/conf/secret.yml"}, Exclude: []string{".agency"}})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(snap.Denied)
	if snap.Tree != "" || !reflect.DeepEqual(snap.Denied, []string{".env", "conf/secret.yml", "sub/deep/server.key"}) {
		t.Fatalf("snapshot %+v", snap)
	}
	objs := git(t, dir, "cat-file", "--batch-all-objects", "--batch")
	for _, s := range []string{"root-secret-value", "deep-secret-value", "anchored-secret-value", "fine"} {
		if strings.Contains(objs, s) {
			t.Errorf("object store holds %q", s)
		}
	}
}

func TestDeniedPatterns(t *testing.T) {
	pats := []string{".env", ".env.*", "*.pem", "/top.key", "conf/*.yml", "secrets/", "deep/keys/"}
	for p, want := range map[string]bool{
		".env": true, "a/b/.env": true, ".env.local": true, "x/.env.prod": true, ".envrc": false,
		"k.pem": true, "a/k.pem": true, "top.key": true, "a/top.key": false,
		"conf/db.yml": true, "a/conf/db.yml": false, "conf/x/db.yml": false,
		"secrets/a": true, "x/secrets/y/z": true, "secrets": false,
		"deep/keys/a": true, "x/deep/keys/a": false, "main.go": false,
	} {
		if got := Denied(p, pats); got != want {
			t.Errorf("%s: got %v", p, got)
		}
	}
}

func TestParseShortstat(t *testing.T) {
	got := parseShortstat(" 3 files changed, 42 insertions(+), 15 deletions(-)\n")
	if got != (Shortstat{3, 42, 15}) {
		t.Errorf("got %+v", got)
	}
	if got := parseShortstat(" 1 file changed, 1 deletion(-)"); got != (Shortstat{1, 0, 1}) {
		t.Errorf("got %+v", got)
	}
}

// A same-size edit made in the same second as the index was written (an
// agent editing a file right after its sandbox was checked out) is only
// seen by git's racy-git check, which compares the index file's own mtime
// with the entry's. The temporary copy must keep that mtime, or the edit is
// taken for clean and silently left out of checkpoints and `land --apply`.
func TestSnapshotTreeRacyEdit(t *testing.T) {
	repo, dir := snapRepo(t)
	// Compare only what this test controls: mtime seconds, size, mode.
	git(t, dir, "config", "core.checkStat", "minimal")
	git(t, dir, "config", "core.trustctime", "false")
	stamp := time.Now().Add(-time.Hour).Truncate(time.Second)
	file := filepath.Join(dir, "tracked.txt")
	index := filepath.Join(dir, ".git", "index")
	os.Chtimes(file, stamp, stamp)
	git(t, dir, "update-index", "--refresh")
	write(t, dir, "tracked.txt", "six\n") // same size as "one\n"
	for _, p := range []string{file, index} {
		if err := os.Chtimes(p, stamp, stamp); err != nil {
			t.Fatal(err)
		}
	}
	if st := git(t, dir, "--no-optional-locks", "status", "--porcelain"); st != "M tracked.txt" {
		t.Fatalf("setup: git status %q, want the edit seen", st)
	}
	snap, err := repo.Tree(dir).SnapshotTree(context.Background(), SnapshotRequest{IncludeUntracked: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := treeFiles(t, dir, snap.Tree)["tracked.txt"]; got != "six" {
		t.Fatalf("snapshot has tracked.txt %q, want the racy edit %q", got, "six")
	}
}
