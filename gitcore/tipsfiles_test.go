package gitcore

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// RefTipsFromFiles gives git's answer for branches, loose, packed, moved
// after packing, missing or deleted; anything else it leaves to git.
func TestRefTipsFromFiles(t *testing.T) {
	ctx := context.Background()
	r, git := testRepo(t)
	base := git("rev-parse", "HEAD")
	git("commit", "-q", "--allow-empty", "-m", "second")
	second := git("rev-parse", "HEAD")
	git("branch", "a", base)
	git("branch", "b", base)
	refs := []string{"refs/heads/a", "refs/heads/b", "refs/heads/c"}
	check := func(what string) {
		t.Helper()
		got, ok := r.RefTipsFromFiles(refs...)
		want, err := r.RefTips(ctx, refs...)
		if err != nil {
			t.Fatal(err)
		}
		if !ok || !reflect.DeepEqual(got, want) {
			t.Errorf("%s: from files %v (ok %v), git says %v", what, got, ok, want)
		}
	}
	check("loose")
	git("pack-refs", "--all")
	check("packed")
	git("update-ref", "refs/heads/b", second)
	check("packed, b moved (loose again)")
	git("branch", "c", second)
	git("pack-refs", "--all")
	git("branch", "-D", "c")
	check("packed c deleted")

	for _, c := range []struct {
		what string
		refs []string
		prep func()
	}{
		{"symbolic", []string{"refs/heads/s"}, func() { git("symbolic-ref", "refs/heads/s", "refs/heads/a") }},
		{"not a branch", []string{"HEAD"}, func() {}},
		{"malformed", []string{"refs/heads/m"}, func() {
			os.WriteFile(filepath.Join(r.CommonDir, "refs", "heads", "m"), []byte("nonsense\n"), 0o644)
		}},
	} {
		c.prep()
		if got, ok := r.RefTipsFromFiles(c.refs...); ok {
			t.Errorf("%s: from files %v, want git asked", c.what, got)
		}
	}
}
