package stream

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/git-agency/git-agency/store"
)

// Lifecycle and landing values of an invocation record (meta.json's status
// and landing_status).
const (
	LifecycleStarting = "starting"
	LifecycleRunning  = "running"
	LifecycleFinished = "finished"
	LifecycleFailed   = "failed"

	// ExitTimeout is the exit_reason of a run a timeout stopped.
	ExitTimeout = "timeout"
	// ExitStopped is the exit_reason of a run a user's stop ended.
	ExitStopped = "stopped"

	LandingPending   = "pending"
	LandingLanded    = "landed"
	LandingDiscarded = "discarded"
)

// Derived display statuses returned by DeriveStatus.
const (
	StatusLanded      = "landed"
	StatusDiscarded   = "discarded"
	StatusFailed      = "failed"
	StatusStopped     = "stopped" // a user's stop ended it
	StatusReadyToLand = "ready to land"
	// StatusReadyToApply: ready to land, and its sandbox holds
	// uncommitted work that only `land --apply` takes.
	StatusReadyToApply = "ready to land (--apply)"
	// StatusNothingToLand: no commits on its branch and no changes in its
	// sandbox that land would take.
	StatusNothingToLand  = "nothing to land"
	StatusStarting       = "starting"
	StatusWorking        = "working"          // runner_status.json
	StatusNeedsInput     = "needs_input"      // runner_status.json or stream
	StatusBlocked        = "blocked"          // runner_status.json
	StatusReadyForReview = "ready_for_review" // runner_status.json
	StatusError          = "error"            // stream: failed result or turn
	StatusStalled        = "stalled"
	StatusActive         = "active"
	StatusUnknown        = "unknown"
)

// RunnerStatusPath is where a cooperating runner reports its own status,
// relative to the sandbox tree.
var RunnerStatusPath = filepath.Join(store.AgencyDir, "state", "runner_status.json")

// RunnerStatus is the content of runner_status.json.
type RunnerStatus struct {
	Status  string `json:"status"` // working, needs_input, blocked, ready_for_review
	Summary string `json:"summary,omitempty"`
}

// Valid reports whether Status is one of the four a runner may write
// (working, needs_input, blocked, ready_for_review).
func (r *RunnerStatus) Valid() bool {
	switch r.Status {
	case StatusWorking, StatusNeedsInput, StatusBlocked, StatusReadyForReview:
		return true
	}
	return false
}

// ReadRunnerStatus reads <sandboxTree>/.agency/state/runner_status.json. A
// missing file gives nil, nil; an unreadable, malformed or invalid one an
// error (callers then derive status without it).
func ReadRunnerStatus(sandboxTree string) (*RunnerStatus, error) {
	f, err := os.Open(filepath.Join(sandboxTree, RunnerStatusPath))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, 64<<10))
	if err != nil {
		return nil, err
	}

	var rs RunnerStatus
	if err := json.Unmarshal(b, &rs); err != nil {
		return nil, fmt.Errorf("%s: %w", RunnerStatusPath, err)
	}
	if !rs.Valid() {
		return nil, fmt.Errorf("%s: unknown status %q", RunnerStatusPath, rs.Status)
	}

	rs.Summary = cut(oneLine(rs.Summary), summaryRunes)
	return &rs, nil
}

// StatusInput is everything DeriveStatus looks at.
type StatusInput struct {
	Lifecycle     string // starting, running, finished, failed
	LandingStatus string // pending (or ""), landed, discarded
	ExitReason    string // exited, stopped, killed, unknown, …
	ExitCode      *int
	Runner        *RunnerStatus // runner_status.json, if any (read while running only)
	Stream        StreamState   // zero if there is no stream (headed, custom)
	// Semantic and SemanticSummary are the record's final semantic status
	// and summary, written when the runner exited.
	Semantic        string
	SemanticSummary string
	// LastOutputAt is the newest output time (record or log mtimes).
	LastOutputAt   time.Time
	Now            time.Time
	StallThreshold time.Duration // <= 0 disables the stall detector
}

// DeriveStatus computes an invocation's display status and a one-line
// summary. The first rule that matches wins:
//
//  1. landing_status landed            → "landed", "landed"
//  2. landing_status discarded         → "discarded", "discarded"
//  3. lifecycle failed                 → "failed", "exit_reason <r>[, exit <code>][: <stream error>]"
//     (a timeout: "timed out (<limit>)[, exit <code>][: <what it was doing>]")
//  4. lifecycle finished, exit_reason stopped → "stopped", "stopped" (with the semantic summary)
//  5. lifecycle finished, final semantic blocked (its work was denied and
//     nothing changed, or its runner said so) → "needs_input", the semantic summary
//  6. lifecycle finished, final semantic error (the agent reported a
//     failure but exited 0)           → "failed", the semantic summary
//  7. lifecycle finished               → "ready to land", the last message (else last summary, else "finished")
//  8. lifecycle starting               → "starting", "starting"
//  9. lifecycle other than running     → "unknown", "lifecycle <value>"
//  10. a valid runner_status.json      → its status (working, needs_input, blocked,
//     ready_for_review), its summary (else the last stream summary)
//  11. stream result is_error or turn.failed → "error", the last error
//  12. stream waiting for the user      → "needs_input", the last summary
//  13. no output for > StallThreshold  → "stalled", "no output for <duration>"
//  14. otherwise                       → "active", the last summary (else "running")
func DeriveStatus(in StatusInput) (status, summary string) {
	st := in.Stream

	switch in.LandingStatus {
	case LandingLanded:
		return StatusLanded, "landed"
	case LandingDiscarded:
		return StatusDiscarded, "discarded"
	}

	switch in.Lifecycle {
	case LifecycleFailed:
		s := "exit_reason " + orDefault(in.ExitReason, "unknown")
		why := st.LastError
		if in.ExitReason == ExitTimeout {
			// The supervisor's summary: "timed out (<limit>)[: <last>]".
			s = "timed out"
			if strings.HasPrefix(in.SemanticSummary, s) {
				s, why, _ = strings.Cut(in.SemanticSummary, ": ")
			}
		}

		if in.ExitCode != nil {
			s += fmt.Sprintf(", exit %d", *in.ExitCode)
		}
		if why != "" {
			s += ": " + why
		}

		return StatusFailed, s
	case LifecycleFinished:
		if in.ExitReason == ExitStopped {
			return StatusStopped, "stopped" + prefixed(": ", in.SemanticSummary)
		}

		switch in.Semantic {
		case StatusBlocked:
			return StatusNeedsInput, orDefault(in.SemanticSummary, "blocked")
		case StatusError:
			return StatusFailed, orDefault(in.SemanticSummary, "the agent reported an error")
		}

		return StatusReadyToLand, orDefault(st.LastMessage, orDefault(st.LastSummary, orDefault(in.SemanticSummary, "finished")))
	case LifecycleStarting:
		return StatusStarting, "starting"
	case LifecycleRunning:
	default:
		return StatusUnknown, "lifecycle " + orDefault(in.Lifecycle, "missing")
	}

	if in.Runner != nil && in.Runner.Valid() {
		return in.Runner.Status, orDefault(in.Runner.Summary, st.LastSummary)
	}
	if st.ResultIsError || st.TurnFailed {
		return StatusError, orDefault(st.LastError, "the agent reported an error")
	}
	if st.WaitingForUser {
		return StatusNeedsInput, st.LastSummary
	}
	if in.StallThreshold > 0 && !in.LastOutputAt.IsZero() {
		if idle := in.Now.Sub(in.LastOutputAt); idle > in.StallThreshold {
			return StatusStalled, "no output for " + idle.Truncate(time.Second).String()
		}
	}

	return StatusActive, orDefault(st.LastSummary, "running")
}

// prefixed is sep+s, or "" when s is empty.
func prefixed(sep, s string) string {
	if s == "" {
		return ""
	}
	return sep + s
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
