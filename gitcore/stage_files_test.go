package gitcore

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// indexEntries is `git ls-files -s` of paths, as stageSmall's old.
func indexEntries(t *testing.T, dir string, paths ...string) map[string]TreeEntry {
	t.Helper()
	old := map[string]TreeEntry{}
	for _, line := range strings.Split(git(t, dir, append([]string{"ls-files", "-s", "--"}, paths...)...), "\n") {
		meta, p, ok := strings.Cut(line, "\t")
		if f := strings.Fields(meta); ok && len(f) == 3 {
			old[p] = TreeEntry{Mode: f[0], OID: f[1]}
		}
	}
	return old
}

// Staging files from their bytes gives what `git update-index` stages
// (changed, new, executable, deleted), with each blob written; and it
// leaves to git every path whose staging is not plainly its bytes.
func TestStageFromFilesAsUpdateIndex(t *testing.T) {
	repo, dir := snapRepo(t)
	tr := repo.Tree(dir)
	gitDir := filepath.Join(dir, ".git")
	ctx := context.Background()
	write(t, dir, "tracked.txt", "two\r\n")
	write(t, dir, "bin/run.sh", "#!/bin/sh\necho run\n")
	if err := os.Chmod(filepath.Join(dir, "bin/run.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, dir, "new/deep/u.txt", "untracked\n")
	if err := os.Remove(filepath.Join(dir, "gone.txt")); err != nil {
		t.Fatal(err)
	}
	paths := []string{"tracked.txt", "bin/run.sh", "new/deep/u.txt", "gone.txt", "never-there.txt"}
	old := indexEntries(t, dir, paths...)

	got, ok := tr.stageFromFiles(gitDir, old, paths, 20)
	if !ok {
		t.Fatal("stageFromFiles refused a plain case")
	}
	want, err := tr.stageSmall(ctx, gitDir, old, paths, 20)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("stageFromFiles = %s, update-index staged %s", show(got), show(want))
	}
	for p, e := range got {
		if e != nil {
			if typ := git(t, dir, "cat-file", "-t", e.OID); typ != "blob" {
				t.Errorf("%s: %s is a %s", p, e.OID, typ)
			}
		}
	}

	refused := func(what string, paths ...string) {
		t.Helper()
		if _, ok := tr.stageFromFiles(gitDir, indexEntries(t, dir, paths...), paths, 20); ok {
			t.Errorf("%s: staged without git", what)
		}
	}
	for _, c := range [][2]string{{"core.autocrlf", "true"}, {"core.autocrlf", "input"}, {"core.fileMode", "false"}, {"core.symlinks", "false"}} {
		git(t, dir, "config", c[0], c[1])
		refused(c[0]+"="+c[1], "tracked.txt")
		git(t, dir, "config", "--unset", c[0])
	}
	write(t, dir, "bin/.gitattributes", "*.sh text eol=crlf\n")
	refused("a .gitattributes on the way", "bin/run.sh")
	refused("a .gitattributes itself", "bin/.gitattributes")
	if _, ok := tr.stageFromFiles(gitDir, old, []string{"tracked.txt"}, 20); !ok {
		t.Error("a .gitattributes elsewhere: refused")
	}
	write(t, dir, ".git/info/attributes", "* -text\n")
	refused("info/attributes", "tracked.txt")
	os.Remove(filepath.Join(dir, ".git/info/attributes"))
	if err := os.Symlink("tracked.txt", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	refused("a symbolic link", "link")
	refused("a directory", "bin")
	refused("a path under another", "new", "new/deep/u.txt")
}

func show(m map[string]*TreeEntry) string {
	var b strings.Builder
	for p, e := range m {
		if e == nil {
			b.WriteString(p + ":gone ")
		} else {
			b.WriteString(p + ":" + e.Mode + "," + e.OID + " ")
		}
	}
	return b.String()
}

// A directory on a listed path's way swapped for a link out of the tree
// after the status (the agent's tree changes while it is read) brings
// nothing from elsewhere: the file is not read through the link, and the
// whole set goes to git, which refuses paths beyond a link.
func TestStageFromFilesNotThroughALink(t *testing.T) {
	repo, dir := snapRepo(t)
	tr := repo.Tree(dir)
	gitDir := filepath.Join(dir, ".git")
	write(t, dir, "d/f.txt", "mine\n")
	outside := t.TempDir()
	secret := "the user's secret\n"
	if err := os.WriteFile(filepath.Join(outside, "f.txt"), []byte(secret), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(dir, "d")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "d")); err != nil {
		t.Fatal(err)
	}
	if staged, ok := tr.stageFromFiles(gitDir, nil, []string{"d/f.txt"}, 20); ok {
		t.Fatalf("staged through a link out of the tree: %v", staged["d/f.txt"])
	}
	if _, err := os.Stat(filepath.Join(gitDir, "objects", objectID("blob", []byte(secret), 20)[:2])); err == nil {
		t.Fatal("the outside file's blob was written")
	}
}
