package runner

import (
	"testing"

	"github.com/git-agency/git-agency/runner/stream"
)

// The final semantic status of every captured real run.
func TestSemanticOfRealStreams(t *testing.T) {
	cases := map[string]string{
		"claude_success.jsonl":  stream.StatusReadyForReview,
		"claude_denied.jsonl":   stream.StatusNeedsInput,
		"claude_fail500.jsonl":  stream.StatusError,
		"claude_retry503.jsonl": stream.StatusError,
		"claude_deadport.jsonl": stream.StatusError,
		"codex_success.jsonl":   stream.StatusReadyForReview,
		"codex_shell.jsonl":     stream.StatusReadyForReview,
		"codex_readonly.jsonl":  stream.StatusReadyForReview,
		"codex_fail500.jsonl":   stream.StatusError,
		"codex_deadport.jsonl":  stream.StatusError,
	}
	for name, want := range cases {
		t.Run(name, func(t *testing.T) {
			st, _ := parseFixture(t, name)
			got, sum := Semantic(nil, st, true)
			if got != want || sum == "" {
				t.Errorf("Semantic = %q, %q; want %q with a summary", got, sum, want)
			}
		})
	}
}

func TestSemantic(t *testing.T) {
	done := stream.StreamState{Events: 5, LastKind: stream.KindResult, ResultSeen: true, LastSummary: "r", LastMessage: "Done"}
	tests := []struct {
		name     string
		rs       *stream.RunnerStatus
		st       stream.StreamState
		ended    bool
		want     string
		wantSumm string
	}{
		{"runner status wins", &stream.RunnerStatus{Status: stream.StatusBlocked, Summary: "no creds"}, done, true, stream.StatusBlocked, "no creds"},
		{"runner status without summary", &stream.RunnerStatus{Status: stream.StatusWorking}, done, false, stream.StatusWorking, "Done"},
		{"invalid runner status ignored", &stream.RunnerStatus{Status: "zzz"}, done, true, stream.StatusReadyForReview, "Done"},
		{"error", nil, stream.StreamState{TurnFailed: true, LastError: "boom"}, true, stream.StatusError, "boom"},
		{"needs input", nil, stream.StreamState{WaitingForUser: true, LastSummary: "Which?"}, true, stream.StatusNeedsInput, "Which?"},
		{"clean end", nil, done, true, stream.StatusReadyForReview, "Done"},
		{"codex turn end", nil, stream.StreamState{LastKind: stream.KindTurnEnd, LastSummary: "turn completed"}, true, stream.StatusReadyForReview, "turn completed"},
		{"still running", nil, done, false, "", "Done"},
		{"cut off mid-run", nil, stream.StreamState{LastKind: stream.KindToolCall, LastSummary: "Write a"}, true, "", "Write a"},
		{"nothing", nil, stream.StreamState{}, true, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, sum := Semantic(tt.rs, tt.st, tt.ended)
			if got != tt.want || sum != tt.wantSumm {
				t.Errorf("Semantic = %q, %q; want %q, %q", got, sum, tt.want, tt.wantSumm)
			}
		})
	}
}

func TestParserFormat(t *testing.T) {
	for in, want := range map[string]struct {
		f  string
		ok bool
	}{"claude": {"claude", true}, "codex": {"codex", true}, "auto": {"", true}, "": {"", false}, "none": {"", false}} {
		f, ok := ParserFormat(in)
		if f != want.f || ok != want.ok {
			t.Errorf("ParserFormat(%q) = %q, %v", in, f, ok)
		}
	}
}
