package gitcore

import (
	"context"
	"reflect"
	"testing"
)

// Unreachable answers for several commits from one walk: a commit on a
// branch, one only a snapshot-style ref holds, and one only a detached
// HEAD holds (HEADs do not count).
func TestUnreachable(t *testing.T) {
	repo, dir := snapRepo(t)
	ctx := context.Background()
	onBranch := git(t, dir, "rev-parse", "HEAD")
	git(t, dir, "checkout", "-q", "--detach")
	git(t, dir, "commit", "-q", "--allow-empty", "-m", "held by a ref")
	byRef := git(t, dir, "rev-parse", "HEAD")
	git(t, dir, "update-ref", "refs/agency/snapshots/x/1", byRef)
	git(t, dir, "commit", "-q", "--allow-empty", "-m", "held by HEAD only")
	headOnly := git(t, dir, "rev-parse", "HEAD")

	got, err := repo.Unreachable(ctx, []string{onBranch, byRef, headOnly, headOnly})
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string]bool{headOnly: true}; !reflect.DeepEqual(got, want) {
		t.Fatalf("Unreachable = %v, want only %s", got, headOnly)
	}
	if got, err := repo.Unreachable(ctx, nil); err != nil || len(got) != 0 {
		t.Fatalf("Unreachable(nil) = %v, %v", got, err)
	}
}
