package store

import "testing"

// The record predicates: active (starting, running), queued (not
// discarded), pending (ended, landing pending, no land in flight).
func TestRecordPredicates(t *testing.T) {
	pending, discarded := Str(LandingPending), Str(LandingDiscarded)
	cases := []struct {
		name                    string
		r                       *InvocationRecord
		active, queued, pending bool
	}{
		{"nil", nil, false, false, false},
		{"starting", &InvocationRecord{Status: StatusStarting}, true, false, false},
		{"running", &InvocationRecord{Status: StatusRunning, LandingStatus: pending}, true, false, false},
		{"queued", &InvocationRecord{Status: StatusQueued}, false, true, false},
		{"queued, discarded", &InvocationRecord{Status: StatusQueued, LandingStatus: discarded}, false, false, false},
		{"finished, pending", &InvocationRecord{Status: StatusFinished, LandingStatus: pending}, false, false, true},
		{"failed, pending", &InvocationRecord{Status: StatusFailed, LandingStatus: pending}, false, false, true},
		{"landing", &InvocationRecord{Status: StatusFinished, LandingStatus: pending, Land: &LandProgress{State: LandInProgress}}, false, false, false},
		{"discarded", &InvocationRecord{Status: StatusFinished, LandingStatus: discarded}, false, false, false},
	}
	for _, c := range cases {
		if got := c.r.Active(); got != c.active {
			t.Errorf("%s: Active = %v", c.name, got)
		}
		if got := c.r.Queued(); got != c.queued {
			t.Errorf("%s: Queued = %v", c.name, got)
		}
		if got := c.r.Pending(); got != c.pending {
			t.Errorf("%s: Pending = %v", c.name, got)
		}
	}
}
