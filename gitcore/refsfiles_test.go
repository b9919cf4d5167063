package gitcore

import (
	"context"
	"reflect"
	"strings"
	"testing"
)

// A checkpoint lists its invocation's snapshot refs with their trees on
// every take: RefsWithTrees reads them from the ref files and the loose
// commits, with no `git for-each-ref`, and gives what git gives, loose,
// packed or both; a packed commit (not a loose file) is asked of git.
func TestRefsWithTreesFromFiles(t *testing.T) {
	ctx := context.Background()
	tree, dir, cmds := recordedRepo(t)
	repo := tree.repo
	prefix := "refs/agency/snapshots/inv-1/"
	head := git(t, dir, "rev-parse", "HEAD")
	for i, msg := range []string{"one", "two", "three"} {
		c := git(t, dir, "commit-tree", "-p", head, "-m", msg, head+"^{tree}")
		git(t, dir, "update-ref", prefix+string(rune('1'+i)), c)
	}
	git(t, dir, "update-ref", "refs/agency/snapshots/inv-10/1", head)
	fromGit := func() []Ref {
		var want []Ref
		out := git(t, dir, "for-each-ref", "--format=%(refname) %(objectname) %(tree)", "--", prefix)
		for _, line := range strings.Split(out, "\n") {
			if f := strings.Fields(line); len(f) == 3 {
				want = append(want, Ref{Name: f[0], Object: f[1], Tree: f[2]})
			}
		}
		return want
	}
	check := func(name string) {
		t.Helper()
		*cmds = nil
		got, err := repo.RefsWithTrees(ctx, prefix)
		if want := fromGit(); err != nil || len(want) != 3 || !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: RefsWithTrees = %v, %v; git %v", name, got, err, want)
		}
		if len(*cmds) != 0 {
			t.Fatalf("%s: ran git: %q", name, *cmds)
		}
	}
	check("loose")
	git(t, dir, "pack-refs", "--all")
	check("packed")
	c := git(t, dir, "commit-tree", "-p", head, "-m", "newer", head+"^{tree}")
	git(t, dir, "update-ref", prefix+"2", c)
	check("packed, one loose over it")

	// the commits packed: git answers
	git(t, dir, "repack", "-adq")
	git(t, dir, "prune")
	*cmds = nil
	got, err := repo.RefsWithTrees(ctx, prefix)
	if want := fromGit(); err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("packed commits: RefsWithTrees = %v, %v; git %v", got, err, want)
	}
	if len(*cmds) != 1 || !strings.Contains((*cmds)[0], "for-each-ref") {
		t.Fatalf("packed commits: git calls %q, want one for-each-ref", *cmds)
	}
}
