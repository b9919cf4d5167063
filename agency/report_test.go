package agency

import (
	"reflect"
	"testing"

	"github.com/git-agency/git-agency/store"
)

func TestReports(t *testing.T) {
	land := &LandResult{InvocationID: "20260101000000-aaa1", Branch: "agency/feat-1234", WorktreeName: "feat",
		Commits: []string{"c0", "c1", "c2"}, Skipped: []string{"c0", "c2"}, ResultHead: "0123456789abcdef", Applied: true}
	want := []string{
		`landed 20260101000000-aaa1: 1 commit and the uncommitted changes onto agency/feat-1234 (worktree "feat")`,
		"skipped 2 commits already on the branch",
		"HEAD is now 0123456789ab; the sandbox tree was removed (branch agency/sandbox-20260101000000-aaa1 kept)",
	}
	if got := land.Report(); !reflect.DeepEqual(got, want) {
		t.Fatalf("land report:\n%q\nwant\n%q", got, want)
	}
	rec := &store.InvocationRecord{InvocationID: "20260101000000-aaa1", SandboxBranch: "agency/sandbox-20260101000000-aaa1",
		Status: store.StatusFailed, ExitReason: store.Str(store.ExitStopped)}
	for _, c := range []struct {
		res   DiscardResult
		first string
		lines int
	}{
		{DiscardResult{Invocation: rec, Restore: &store.Restore{Checkpoint: 3}}, "discarded 20260101000000-aaa1", 3},
		{DiscardResult{Invocation: rec, Stopped: true}, "discarded 20260101000000-aaa1 (stopped first: failed, stopped)", 3},
		{DiscardResult{Invocation: rec, AlreadyDiscarded: true}, "20260101000000-aaa1 was already discarded", 1},
	} {
		got := c.res.Report()
		if got[0] != c.first || len(got) != c.lines {
			t.Errorf("discard report %q, want first line %q", got, c.first)
		}
	}
}
