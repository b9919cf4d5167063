package runner

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/git-agency/git-agency/gitcore"
	"github.com/git-agency/git-agency/runner/stream"
	"github.com/git-agency/git-agency/store"
)

// parseTurn runs one captured real stream through the parser, continuing
// the account of the earlier turns as the supervisor does.
func parseTurn(t *testing.T, name string, prev stream.Usage) (stream.StreamState, stream.Usage) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "testdata", "fixtures", "stream", name))
	if err != nil {
		t.Fatal(err)
	}
	p := stream.NewParser(stream.FormatAuto, nil)
	p.Continue(prev)
	p.Write(b)
	p.Flush()
	return p.State(), p.Usage()
}

// The real CLIs' totals on a resumed conversation are cumulative: each
// turn's record takes them once, whatever came before; only turns add up.
func TestUsageOfResumedCaptures(t *testing.T) {
	cost := 0.02
	first := stream.Usage{Turns: 3, InputTokens: 3000, OutputTokens: 150, CostUSD: &cost}
	t.Run("claude", func(t *testing.T) {
		st, two := parseTurn(t, "claude_resume_turn2.jsonl", first)
		if st.SessionID != "1ae59246-6628-4cc6-8f86-85256504b3da" {
			t.Errorf("session id %q", st.SessionID)
		}
		if r := UsageRecord(two, 2); r.CostUSD == nil || *r.CostUSD != 0.03636 || r.Turns != 2 {
			t.Errorf("turn 2 = %+v, want the session's cost 0.03636 and 2 turns", *r)
		}
		_, four := parseTurn(t, "claude_resume_turn4.jsonl", two)
		if four.CostUSD == nil || *four.CostUSD != 0.04848000000000001 || four.InputTokens <= two.InputTokens {
			t.Errorf("turn 4 = %+v, want the session's cost 0.04848 and more tokens than turn 2's %d", four, two.InputTokens)
		}
	})
	t.Run("codex", func(t *testing.T) {
		st, two := parseTurn(t, "codex_resume_turn2.jsonl", first)
		if st.SessionID != "01a208ef-bdf3-77b0-95d6-53843ef82cb5" {
			t.Errorf("thread id %q", st.SessionID)
		}
		if two.InputTokens != 6500 || two.OutputTokens != 250 || two.Turns != 4 {
			t.Errorf("turn 2 = %+v, want the thread's 6500/250 tokens and 4 turns", two)
		}
		_, four := parseTurn(t, "codex_resume_turn4.jsonl", two)
		if four.InputTokens != 9100 || four.OutputTokens != 350 || four.Turns != 5 {
			t.Errorf("turn 4 = %+v, want 9100/350 tokens and one more turn", four)
		}
	})
}

func TestResumeArguments(t *testing.T) {
	cfg := gitcore.NewConfig(nil)
	claude, _ := Lookup(cfg, "claude")
	id := NewSessionID()
	if len(id) != 36 || id[14] != '4' {
		t.Fatalf("NewSessionID = %q, want a version 4 UUID", id)
	}
	if got := claude.StartArgs(nil, id); !reflect.DeepEqual(got, []string{"--session-id", id}) {
		t.Errorf("claude start args = %q", got)
	}
	for _, user := range [][]string{{"--resume", "x"}, {"--continue"}, {"--session-id=abc"}} {
		if got := claude.StartArgs(user, id); got != nil {
			t.Errorf("with %q, start args = %q, want none", user, got)
		}
	}
	got := claude.resumeArgv(true, []string{"--permission-mode", "default"}, "S1", "go on", sb)
	want := []string{"claude", "-p", "--output-format", "stream-json", "--verbose", "--permission-mode", "default", "--resume", "S1", "--", "go on"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("claude resume argv =\n %q\nwant\n %q", got, want)
	}
	codex, _ := Lookup(cfg, "codex")
	if got := codex.StartArgs(nil, id); got != nil {
		t.Errorf("codex start args = %q, want none (the thread id comes from its stream)", got)
	}
	got = codex.resumeArgv(true, nil, "T1", "go on", sb)
	want = []string{"codex", "exec", "-C", "/sb", "--json", "resume", "T1", "--", "go on"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("codex resume argv = %q", got)
	}
	custom, _ := Lookup(gitcore.NewConfig([]gitcore.ConfigEntry{
		{Key: "agency.runner.mine.command", Value: "mine"},
		{Key: "agency.runner.mine.resumeArg", Value: "--conversation={session_id}"},
	}), "mine")
	if got := custom.resumeArgv(true, nil, "C9", "p", sb); !reflect.DeepEqual(got, []string{"mine", "--conversation=C9", "p"}) {
		t.Errorf("custom resume argv = %q", got)
	}
	if plain, _ := Lookup(gitcore.NewConfig([]gitcore.ConfigEntry{{Key: "agency.runner.x.command", Value: "x"}}), "x"); len(plain.ResumeArgs) != 0 {
		t.Errorf("a custom runner without resumeArg resumes with %q", plain.ResumeArgs)
	}
}

// A runner_status.json left by an earlier turn says nothing of the current
// one.
func TestTurnRunnerStatus(t *testing.T) {
	tree := t.TempDir()
	path := filepath.Join(tree, stream.RunnerStatusPath)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(`{"status":"needs_input","summary":"Which one?"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(path, old, old); err != nil {
		t.Fatal(err)
	}
	rec := &store.InvocationRecord{SandboxPath: tree}
	if rs := TurnRunnerStatus(rec); rs == nil || rs.Status != "needs_input" {
		t.Fatalf("first turn: %v", rs)
	}
	rec.TurnStartedAt = time.Now().Add(-time.Minute).UTC().Format(time.RFC3339)
	if rs := TurnRunnerStatus(rec); rs != nil {
		t.Fatalf("a status from before the turn: %v", rs)
	}
	now := time.Now()
	os.Chtimes(path, now, now)
	if rs := TurnRunnerStatus(rec); rs == nil {
		t.Fatal("a status written in this turn is ignored")
	}
}
