package stream

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// replay parses a capture of a real CLI run from testdata/fixtures/stream/real
// (stdout, and the stderr log beside it when there is one) the way the
// supervisor does.
func replay(t *testing.T, format, name string) ([]Event, *Parser) {
	t.Helper()
	evs, p := parseWith(t, format, fixture(t, filepath.Join("real", name)), func(p *Parser) {
		errLog := filepath.Join("..", "..", "testdata", "fixtures", "stream", "real", strings.TrimSuffix(name, ".raw.jsonl")+".stderr.log")
		if b, err := os.ReadFile(errLog); err == nil {
			p.Stderr().Write(b)
		}
	})
	return evs, p
}

func find(evs []Event, src string) []Event {
	var out []Event
	for _, ev := range evs {
		if ev.SourceType == src {
			out = append(out, ev)
		}
	}
	return out
}

func TestRealClaudePermissionDenied(t *testing.T) {
	evs, p := replay(t, FormatClaude, "c-deny.raw.jsonl")
	if got := kinds(evs); got != "session_start tool_call error tool_result message result" {
		t.Fatalf("kinds = %s", got)
	}
	d := evs[2]
	if d.SourceType != "system/permission_denied" || !d.Denied || d.Tool != "Write" ||
		d.Summary != "permission denied: Write: Claude requested permissions to write to hello.txt, but you haven't granted it yet." {
		t.Errorf("denial = %+v", d)
	}
	if r := evs[3]; !r.IsError || !strings.HasPrefix(r.Summary, "Write failed: Claude requested permissions to write to hello.txt") {
		t.Errorf("failed tool result = %+v", r)
	}
	s := p.State()
	if s.Denials != 1 || !s.WaitingForUser || s.Unknown != 0 || s.SessionID != "d6c96ee7-02f0-4dec-9f2a-fa609f4b498d" {
		t.Errorf("state = %+v", s)
	}
}

func TestRealClaudeHooks(t *testing.T) {
	evs, p := replay(t, FormatClaude, "c-hooks.raw.jsonl")
	if got := kinds(evs[:2]); got != "hook hook" || evs[1].Summary != "hook SessionStart:startup success" {
		t.Errorf("hooks = %s / %q", got, evs[1].Summary)
	}
	if p.State().Unknown != 0 {
		t.Errorf("state = %+v", p.State())
	}
	// A failing hook is an error.
	evs, _ = parse(t, FormatClaude, []byte(`{"type":"system","subtype":"hook_response","hook_name":"PreToolUse:Bash","outcome":"error","exit_code":2,"stderr":"blocked by policy"}`+"\n"))
	if e := evs[0]; e.Kind != KindError || !e.IsError || e.Summary != "hook PreToolUse:Bash failed (exit 2): blocked by policy" {
		t.Errorf("failed hook = %+v", e)
	}
}

func TestRealClaudeSubagent(t *testing.T) {
	evs, p := replay(t, FormatClaude, "c-SUBAGENT.raw.jsonl")
	s := p.State()
	if s.Unknown != 0 {
		t.Errorf("unknown events: %s", kinds(evs))
	}
	var sub []Event
	for _, ev := range evs {
		if ev.Agent != "" {
			sub = append(sub, ev)
		}
	}
	if len(sub) != 3 || sub[0].Agent != "aacc44a369e34370c" || sub[0].Summary != "[sub task] Write hello.txt" {
		t.Fatalf("subagent events = %+v", sub)
	}
	if n := len(find(evs, "system/task_started")) + len(find(evs, "system/task_progress")) + len(find(evs, "system/task_updated")) +
		len(find(evs, "system/task_notification")) + len(find(evs, "system/background_tasks_changed")); n != 6 {
		t.Errorf("task events = %d", n)
	}
	// Two result lines (result_index 0 and 1), both with the session's
	// cumulative modelUsage and cost: counted once, not added up.
	if r := find(evs, "result/success"); len(r) != 2 {
		t.Fatalf("results = %d", len(r))
	}
	u := p.Usage()
	if u.InputTokens != 7500 || u.CachedInputTokens != 1500 || u.OutputTokens != 250 || u.CostUSD == nil || *u.CostUSD != 0.0303 {
		t.Errorf("usage = %+v", u)
	}
	if !s.ResultSeen || s.ResultIsError || s.LastMessage != "Done: wrote the file." {
		t.Errorf("state = %+v", s)
	}
	// The 2.1.197 shape: no agent_id, the Task call's id names the subagent.
	evs, _ = replay(t, FormatClaude, "c197-sub.raw.jsonl")
	if w := find(evs, "assistant/tool_use"); len(w) != 2 || w[1].Agent != "toolu_a588651143284c108954" || w[1].Summary != "[sub task] Write hello.txt" {
		t.Errorf("subagent tool call = %+v", w)
	}
}

func TestRealClaudeThinking(t *testing.T) {
	evs, p := replay(t, FormatClaude, "c-THINK.raw.jsonl")
	if got := kinds(evs); got != "session_start progress message message result" || evs[1].Summary != "thinking (~8 tokens)" {
		t.Errorf("kinds = %s, %q", got, evs[1].Summary)
	}
	if p.State().LastMessage != "Thought about it." {
		t.Errorf("state = %+v", p.State())
	}
}

func TestRealClaudeAborted(t *testing.T) {
	evs, p := replay(t, FormatClaude, "c-hang.raw.jsonl")
	r := evs[len(evs)-1]
	if r.TerminalReason != "aborted_streaming" || !r.IsError || !strings.HasPrefix(r.Summary, "failed (aborted_streaming): ") {
		t.Errorf("result = %+v", r)
	}
	if !p.State().ResultIsError {
		t.Errorf("state = %+v", p.State())
	}
	evs, _ = parse(t, FormatClaude, []byte(`{"type":"result","subtype":"success","is_error":true,"result":"API Error: 529 overloaded","terminal_reason":"api_error","api_error_status":529,"num_turns":1}`+"\n"))
	if r := evs[0]; r.APIErrorStatus == nil || *r.APIErrorStatus != 529 || r.Summary != "failed (api_error, HTTP 529): API Error: 529 overloaded" {
		t.Errorf("api error result = %+v", r)
	}
}

func TestRealClaudeMultiUsageLiveAndFinal(t *testing.T) {
	data := fixture(t, filepath.Join("real", "c-multi.raw.jsonl"))
	lines := strings.SplitAfter(string(data), "\n")
	p := NewParser(FormatClaude, nil)
	// Before the result, usage is the sum of each model message's usage,
	// each message counted once although it spans several lines.
	p.Write([]byte(strings.Join(lines[:len(lines)-2], "")))
	live := p.Usage()
	if live.InputTokens != 5*1500 || live.OutputTokens != 5 || live.CachedInputTokens != 5*300 {
		t.Errorf("live usage = %+v", live)
	}
	p.Write([]byte(strings.Join(lines[len(lines)-2:], "")))
	p.Flush()
	u := p.Usage()
	if u.Turns != 6 || u.InputTokens != 7500 || u.OutputTokens != 250 || *u.CostUSD != 0.0303 {
		t.Errorf("final usage = %+v", u)
	}
	s := p.State()
	if s.Denials != 1 || !s.WaitingForUser || s.SessionID != "699c247a-97c0-4aad-8aee-438c83459bab" {
		t.Errorf("state = %+v", s)
	}
}

// conversation replays the captures of one conversation's runs, each
// through a fresh parser appending to the same stream.jsonl (as agent send
// does), and loads that back.
func conversation(t *testing.T, format string, files ...string) (StreamState, Usage) {
	t.Helper()
	var out strings.Builder
	for _, f := range files {
		p := NewParser(format, &out)
		p.Write(fixture(t, filepath.Join("real", f)))
		p.Flush()
	}
	s, u, err := LoadState(strings.NewReader(out.String()))
	if err != nil {
		t.Fatal(err)
	}
	return s, u
}

// A resumed conversation's stream.jsonl holds both runs: the totals of the
// second result are the conversation's, never added to the first's.
func TestRealClaudeResumeCountsOnce(t *testing.T) {
	if _, u := conversation(t, FormatClaude, "claude-resume-same-sandbox.jsonl"); u.InputTokens != 9000 || *u.CostUSD != 0.03636 {
		t.Fatalf("first run usage = %+v", u)
	}
	s, u := conversation(t, FormatClaude, "claude-resume-same-sandbox.jsonl", "c-resume-agency.raw.jsonl")
	if u.InputTokens != 12000 || u.OutputTokens != 400 || *u.CostUSD != 0.04848000000000001 || u.Turns != 2 {
		t.Errorf("conversation usage = %+v", u)
	}
	if s.SessionID != "1ae59246-6628-4cc6-8f86-85256504b3da" {
		t.Errorf("session = %q", s.SessionID)
	}
}

func TestRealCodexResumeCountsOnce(t *testing.T) {
	s, u := conversation(t, FormatCodex, "codex-exec-resume-same-sandbox.jsonl", "x-resume-agency.raw.jsonl")
	if u.Turns != 2 || u.InputTokens != 9100 || u.CachedInputTokens != 2100 || u.OutputTokens != 350 || u.ReasoningTokens != 140 {
		t.Errorf("thread usage = %+v", u)
	}
	if s.SessionID != "01a208ef-bdf3-77b0-95d6-53843ef82cb5" {
		t.Errorf("thread = %q", s.SessionID)
	}
}

func TestRealCodexRejectedPatch(t *testing.T) {
	evs, p := replay(t, FormatCodex, "x-deny.raw.jsonl")
	d := find(evs, "stderr/tools.router")
	if len(d) != 1 || !d[0].Denied || d[0].Line != 0 ||
		d[0].Summary != "denied: patch rejected: writing is blocked by read-only sandbox; rejected by user approval settings" {
		t.Fatalf("rejection = %+v", d)
	}
	s := p.State()
	if s.Denials != 1 || !s.Ended() || s.SessionID != "01a20903-90bc-7823-9bc2-1d26ebaf6df8" {
		t.Errorf("state = %+v", s)
	}
	// Other stderr lines are not events; a line split across writes is whole.
	q := NewParser(FormatCodex, nil)
	q.Stderr().Write([]byte("Reading additional input from stdin...\n2026 ERROR codex_core::tools::router: error=exec "))
	q.Stderr().Write([]byte("command rejected by user\n"))
	if st := q.State(); st.Events != 1 || st.Denials != 1 {
		t.Errorf("stderr state = %+v", st)
	}
	// A tool call whose sandbox failed to start (codex inside a wall of
	// its own) did not run either: it counts as denied.
	r := NewParser(FormatCodex, nil)
	r.Stderr().Write([]byte("2026 ERROR codex_core::tools::router: error=exec failed: sandbox error: bwrap: No permissions to create new namespace\n"))
	if st := r.State(); st.Denials != 1 || st.LastDenial != "tool failed: exec failed: sandbox error: bwrap: No permissions to create new namespace" {
		t.Errorf("failed sandbox state = %+v", st)
	}
}

func TestRealCodexWarningsWebAndTokens(t *testing.T) {
	evs, p := replay(t, FormatCodex, "x-hookbypass.raw.jsonl")
	w := find(evs, "item.completed/error")
	if len(w) != 2 || !w[0].Warning || w[0].IsError || !strings.HasPrefix(w[0].Summary, "warning: `--dangerously-bypass-hook-trust`") {
		t.Errorf("warnings = %+v", w)
	}
	if s := p.State(); s.ResultIsError || s.TurnFailed || !s.Ended() || s.LastError != "" {
		t.Errorf("state = %+v", s)
	}
	evs, p = replay(t, FormatCodex, "x-WEB.raw.jsonl")
	if got := kinds(evs); got != "session_start turn_start tool_call message turn_end" {
		t.Errorf("web_search kinds = %s", got)
	}
	if u := p.Usage(); u.InputTokens != 1300 || u.CachedInputTokens != 300 || u.OutputTokens != 50 || u.ReasoningTokens != 20 {
		t.Errorf("usage = %+v", u)
	}
	_, p = replay(t, FormatCodex, "x-multi.raw.jsonl")
	if s := p.State(); s.Unknown != 0 || s.LastMessage != "Done: wrote the file." {
		t.Errorf("state = %+v", s)
	}
}

func TestCodexRetryIsNotFatal(t *testing.T) {
	in := `{"type":"thread.started","thread_id":"t"}
{"type":"turn.started"}
{"type":"error","message":"Reconnecting... 1/5"}
{"type":"turn.failed","error":{"message":"stream disconnected"}}
`
	evs, p := parse(t, FormatCodex, []byte(in))
	if r := evs[2]; !r.Retry || r.IsError || r.Summary != "retrying: Reconnecting... 1/5" {
		t.Errorf("retry = %+v", r)
	}
	if f := evs[3]; f.Retry || !f.IsError {
		t.Errorf("turn.failed = %+v", f)
	}
	if s := p.State(); s.Retries != 1 || !s.TurnFailed {
		t.Errorf("state = %+v", s)
	}
}

// A resumed run's parser continues the account of the earlier runs: live
// usage is the conversation's from the first message on, and the result's
// cumulative totals replace it.
func TestContinueUsage(t *testing.T) {
	_, prev := conversation(t, FormatClaude, "claude-resume-same-sandbox.jsonl")
	lines := strings.SplitAfter(string(fixture(t, filepath.Join("real", "c-resume-agency.raw.jsonl"))), "\n")
	q := NewParser(FormatClaude, nil)
	q.Continue(prev)
	q.Write([]byte(lines[0] + lines[1])) // init and the first message
	if u := q.Usage(); u.InputTokens != 9000+1500 || u.Turns != 1 || *u.CostUSD != 0.03636 {
		t.Errorf("live usage = %+v", u)
	}
	q.Write([]byte(strings.Join(lines[2:], "")))
	q.Flush()
	if u := q.Usage(); u.InputTokens != 12000 || u.Turns != 2 || *u.CostUSD != 0.04848000000000001 {
		t.Errorf("final usage = %+v", u)
	}
}

// Hooks that run after the result (SessionEnd) do not undo its verdict.
func TestHookAfterResultKeepsWaiting(t *testing.T) {
	in := string(fixture(t, filepath.Join("real", "c-deny.raw.jsonl"))) +
		`{"type":"system","subtype":"hook_started","hook_name":"SessionEnd","hook_event":"SessionEnd"}` + "\n" +
		`{"type":"system","subtype":"hook_response","hook_name":"SessionEnd","hook_event":"SessionEnd","exit_code":0,"outcome":"success"}` + "\n"
	_, p := parse(t, FormatClaude, []byte(in))
	if s := p.State(); !s.WaitingForUser || !s.ResultSeen {
		t.Errorf("state = %+v", s)
	}
}
