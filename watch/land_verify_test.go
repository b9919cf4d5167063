package watch

import (
	"testing"

	"github.com/git-agency/git-agency/store"
)

// A ready row whose latest check failed, runs, was cancelled or could not
// run shows that status, and is not counted ready.
func TestVerifyStatusesNotReady(t *testing.T) {
	for status, want := range map[string]string{
		store.VerifyFailed:    StatusVerifyFailed,
		store.VerifyCancelled: StatusVerifyCancelled,
		store.VerifyErrored:   StatusVerifyError,
		store.VerifyPassed:    StatusReady,
		"":                    StatusReady,
	} {
		r := &store.InvocationRecord{}
		r.VerifyStatus = status
		got := verifyDisplay(StatusReady, r)
		if got != want {
			t.Errorf("verify_status %q: display %q, want %q", status, got, want)
		}
		if got := verifyDisplay(StatusLanded, r); got != StatusLanded {
			t.Errorf("verify_status %q: a landed row shows %q", status, got)
		}
		wt := WorktreeRow{Invocations: []InvocationRow{{Display: got}}}
		if c := wt.Counts(); (c.Ready == 1) != (want == StatusReady) {
			t.Errorf("verify_status %q: counted ready %d", status, c.Ready)
		}
	}
	if _, ok := NewStyles(nil).Status[StatusVerifyFailed]; !ok {
		t.Errorf("verify failed has no style of its own")
	}
}

// A second action while one runs is refused: two lands at once would race.
func TestOneActionAtATime(t *testing.T) {
	s := mixed()
	h := start(t, s, 100, 24)
	h.acts.landHold = make(chan struct{})
	h.keys("j", "j", "L")
	h.waitFor("land d4e5 (codex) into my-feature? [y/n]")
	h.keys("y")
	h.waitFor("land d4e5…")
	h.keys("j", "j", "D")
	h.waitFor("discard 0c1d (sh) and delete its sandbox? [y/n]")
	h.keys("y")
	h.waitFor("is still running")
	close(h.acts.landHold)
	h.waitFor("landed d4e5")
	h.final()
	if got := h.acts.called(); len(got) != 1 || got[0] != "land d4e5" {
		t.Fatalf("calls %v", got)
	}
}
