package view

import (
	"testing"

	"github.com/git-agency/git-agency/runner/stream"
)

// Every status DeriveStatus can return maps into watch's vocabulary.
func TestDisplayOf(t *testing.T) {
	want := map[string]string{
		stream.StatusLanded:         "landed",
		stream.StatusDiscarded:      "discarded",
		stream.StatusFailed:         "failed",
		stream.StatusReadyToLand:    "ready to land",
		stream.StatusStarting:       "starting",
		stream.StatusWorking:        "active",
		stream.StatusActive:         "active",
		stream.StatusStalled:        "stalled",
		stream.StatusNeedsInput:     "needs input",
		stream.StatusBlocked:        "needs input",
		stream.StatusReadyForReview: "needs input",
		stream.StatusError:          "needs input",
	}
	for in, w := range want {
		if got := displayOf(in); got != w {
			t.Errorf("displayOf(%q) = %q, want %q", in, got, w)
		}
	}
}
