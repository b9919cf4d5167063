package stream

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestDeriveStatus(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	exit1 := 1
	working := &RunnerStatus{Status: StatusWorking, Summary: "writing tests"}
	blocked := &RunnerStatus{Status: StatusBlocked}
	bogus := &RunnerStatus{Status: "sleeping", Summary: "zzz"}
	msgState := StreamState{Events: 4, LastKind: KindToolCall, LastSummary: "Write a.go", LastMessage: "Done: wrote a.go"}
	tests := []struct {
		name        string
		in          StatusInput
		status, sum string
	}{
		{"landed wins over everything", StatusInput{Lifecycle: LifecycleFinished, LandingStatus: LandingLanded, Runner: working}, StatusLanded, "landed"},
		{"discarded", StatusInput{Lifecycle: LifecycleFailed, LandingStatus: LandingDiscarded}, StatusDiscarded, "discarded"},
		{"failed", StatusInput{Lifecycle: LifecycleFailed, ExitReason: "exited", ExitCode: &exit1,
			Stream: StreamState{LastError: "failed: API Error: 500"}}, StatusFailed, "exit_reason exited, exit 1: failed: API Error: 500"},
		{"failed without reason", StatusInput{Lifecycle: LifecycleFailed}, StatusFailed, "exit_reason unknown"},
		{"finished is ready to land", StatusInput{Lifecycle: LifecycleFinished, LandingStatus: LandingPending, Stream: msgState, Runner: working}, StatusReadyToLand, "Done: wrote a.go"},
		{"finished, no stream", StatusInput{Lifecycle: LifecycleFinished}, StatusReadyToLand, "finished"},
		{"finished after a denial is not ready to land", StatusInput{Lifecycle: LifecycleFinished, LandingStatus: LandingPending,
			Semantic: StatusBlocked, SemanticSummary: "nothing changed: permission denied: Write: …"}, StatusNeedsInput, "nothing changed: permission denied: Write: …"},
		{"finished asking a question is still landable", StatusInput{Lifecycle: LifecycleFinished, Semantic: StatusNeedsInput, SemanticSummary: "Which DB?"}, StatusReadyToLand, "Which DB?"},
		{"finished with a reported error", StatusInput{Lifecycle: LifecycleFinished, Semantic: StatusError, SemanticSummary: "failed: boom"}, StatusFailed, "failed: boom"},
		{"finished clean", StatusInput{Lifecycle: LifecycleFinished, Semantic: StatusReadyForReview, SemanticSummary: "Done"}, StatusReadyToLand, "Done"},
		{"timed out says so", StatusInput{Lifecycle: LifecycleFailed, ExitReason: ExitTimeout, ExitCode: &exit1,
			Semantic: StatusError, SemanticSummary: "timed out (no output for 5m0s): Bash sleep 99"}, StatusFailed, "timed out (no output for 5m0s), exit 1: Bash sleep 99"},
		{"timed out, no stream", StatusInput{Lifecycle: LifecycleFailed, ExitReason: ExitTimeout}, StatusFailed, "timed out"},
		{"starting", StatusInput{Lifecycle: LifecycleStarting}, StatusStarting, "starting"},
		{"unknown lifecycle", StatusInput{Lifecycle: "zombie"}, StatusUnknown, "lifecycle zombie"},
		{"runner status wins over stream", StatusInput{Lifecycle: LifecycleRunning, Runner: working,
			Stream: StreamState{ResultIsError: true, LastError: "x"}}, StatusWorking, "writing tests"},
		{"runner status without summary", StatusInput{Lifecycle: LifecycleRunning, Runner: blocked, Stream: msgState}, StatusBlocked, "Write a.go"},
		{"invalid runner status ignored", StatusInput{Lifecycle: LifecycleRunning, Runner: bogus, Stream: msgState}, StatusActive, "Write a.go"},
		{"result is_error", StatusInput{Lifecycle: LifecycleRunning,
			Stream: StreamState{ResultSeen: true, ResultIsError: true, LastError: "failed: API Error: 503"}}, StatusError, "failed: API Error: 503"},
		{"turn failed", StatusInput{Lifecycle: LifecycleRunning, Stream: StreamState{TurnFailed: true}}, StatusError, "the agent reported an error"},
		{"waiting for user beats stall", StatusInput{Lifecycle: LifecycleRunning, Stream: StreamState{WaitingForUser: true, LastSummary: "Which DB?"},
			LastOutputAt: now.Add(-time.Hour), Now: now, StallThreshold: time.Minute}, StatusNeedsInput, "Which DB?"},
		{"stalled", StatusInput{Lifecycle: LifecycleRunning, Stream: msgState,
			LastOutputAt: now.Add(-90 * time.Second), Now: now, StallThreshold: time.Minute}, StatusStalled, "no output for 1m30s"},
		{"at the threshold is not stalled", StatusInput{Lifecycle: LifecycleRunning, Stream: msgState,
			LastOutputAt: now.Add(-time.Minute), Now: now, StallThreshold: time.Minute}, StatusActive, "Write a.go"},
		{"stall detector off", StatusInput{Lifecycle: LifecycleRunning,
			LastOutputAt: now.Add(-time.Hour), Now: now}, StatusActive, "running"},
		{"no output yet is not stalled", StatusInput{Lifecycle: LifecycleRunning, Now: now, StallThreshold: time.Minute}, StatusActive, "running"},
		{"active", StatusInput{Lifecycle: LifecycleRunning, Stream: msgState, LastOutputAt: now, Now: now, StallThreshold: time.Minute}, StatusActive, "Write a.go"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st, sum := DeriveStatus(tt.in)
			if st != tt.status || sum != tt.sum {
				t.Errorf("DeriveStatus = %q, %q; want %q, %q", st, sum, tt.status, tt.sum)
			}
		})
	}
}

func TestReadRunnerStatus(t *testing.T) {
	tree := t.TempDir()
	rs, err := ReadRunnerStatus(tree)
	if rs != nil || err != nil {
		t.Fatalf("missing file: %v, %v", rs, err)
	}
	dir := filepath.Join(tree, ".agency", "state")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "runner_status.json")
	cases := []struct {
		content string
		want    *RunnerStatus
		wantErr bool
	}{
		{`{"status":"needs_input","summary":"which\nDB?"}`, &RunnerStatus{Status: StatusNeedsInput, Summary: "which DB?"}, false},
		{`{"status":"ready_for_review"}`, &RunnerStatus{Status: StatusReadyForReview}, false},
		{`{"status":"sleeping"}`, nil, true},
		{`{"status":`, nil, true},
	}
	for _, c := range cases {
		if err := os.WriteFile(file, []byte(c.content), 0o644); err != nil {
			t.Fatal(err)
		}
		rs, err := ReadRunnerStatus(tree)
		if (err != nil) != c.wantErr {
			t.Errorf("%s: err = %v", c.content, err)
		}
		if (rs == nil) != (c.want == nil) || (rs != nil && *rs != *c.want) {
			t.Errorf("%s: got %+v, want %+v", c.content, rs, c.want)
		}
	}
}
