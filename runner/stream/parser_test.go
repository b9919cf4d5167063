package stream

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

var fixedTime = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// parse feeds data to a fresh parser in one chunk and returns the events
// it wrote, decoded.
func parse(t *testing.T, format string, data []byte) ([]Event, *Parser) {
	t.Helper()
	return parseWith(t, format, data, nil)
}

// parseWith is parse with a hook that runs after the data was written and
// before the flush.
func parseWith(t *testing.T, format string, data []byte, then func(*Parser)) ([]Event, *Parser) {
	t.Helper()
	var out bytes.Buffer
	p := NewParser(format, &out)
	p.setClock(func() time.Time { return fixedTime })
	if n, err := p.Write(data); n != len(data) || err != nil {
		t.Fatalf("Write = %d, %v; want %d, nil", n, err, len(data))
	}
	if then != nil {
		then(p)
	}
	if err := p.Flush(); err != nil {
		t.Fatalf("Flush: %v", err)
	}
	return decode(t, out.Bytes()), p
}

func decode(t *testing.T, b []byte) []Event {
	t.Helper()
	var evs []Event
	for _, l := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
		if len(l) == 0 {
			continue
		}
		var ev Event
		if err := json.Unmarshal(l, &ev); err != nil {
			t.Fatalf("stream.jsonl line %q: %v", l, err)
		}
		evs = append(evs, ev)
	}
	return evs
}

func fixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "fixtures", "stream", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func kinds(evs []Event) string {
	var k []string
	for _, ev := range evs {
		k = append(k, ev.Kind)
	}
	return strings.Join(k, " ")
}

func f64(v float64) *float64 { return &v }

func TestFixtures(t *testing.T) {
	tests := []struct {
		file      string
		kinds     string
		summaries map[int]string // index → summary
		usage     Usage
		check     func(t *testing.T, s StreamState)
	}{
		{
			file:  "claude_success.jsonl",
			kinds: "session_start tool_call tool_result message result",
			summaries: map[int]string{
				0: "session SESSION_ID started (model claude-opus-4-8[1m])",
				1: "Write hello.txt",
				3: "Done: wrote the file.",
				4: "Done: wrote the file.",
			},
			usage: Usage{Turns: 2, InputTokens: 20, OutputTokens: 10, CostUSD: f64(0.00035)},
			check: func(t *testing.T, s StreamState) {
				if !s.ResultSeen || s.ResultIsError || s.WaitingForUser || s.SessionID != "SESSION_ID" {
					t.Errorf("state = %+v", s)
				}
			},
		},
		{
			file:  "claude_fail500.jsonl",
			kinds: "session_start error result",
			usage: Usage{Turns: 1, CostUSD: f64(0)},
			check: func(t *testing.T, s StreamState) {
				if !s.ResultIsError || !strings.HasPrefix(s.LastError, "failed (HTTP 500): API Error: 500") {
					t.Errorf("state = %+v", s)
				}
			},
		},
		{
			file:      "claude_retry503.jsonl",
			kinds:     "session_start error error error result",
			summaries: map[int]string{1: "API retry 1/2 after HTTP 503 (server_error)"},
			usage:     Usage{Turns: 1, CostUSD: f64(0)},
			check: func(t *testing.T, s StreamState) {
				if s.Retries != 2 || !s.ResultIsError {
					t.Errorf("state = %+v", s)
				}
			},
		},
		{
			file:      "claude_deadport.jsonl",
			kinds:     "session_start error result",
			summaries: map[int]string{2: "failed: API Error: Unable to connect to API (ConnectionRefused)"},
			usage:     Usage{Turns: 1, CostUSD: f64(0)},
		},
		{
			file:  "claude_stall.jsonl",
			kinds: "session_start error result",
			usage: Usage{Turns: 1, CostUSD: f64(0)},
		},
		{
			file:  "claude_denied.jsonl",
			kinds: "session_start tool_call tool_result message result",
			usage: Usage{Turns: 2, InputTokens: 20, OutputTokens: 10, CostUSD: f64(0.00035)},
			check: func(t *testing.T, s StreamState) {
				// 2.1.197 lists the denial in the result only.
				if !s.WaitingForUser || s.ResultIsError || s.Denials != 1 {
					t.Errorf("state = %+v", s)
				}
			},
		},
		{
			file:      "codex_success.jsonl",
			kinds:     "session_start turn_start file_change message turn_end",
			summaries: map[int]string{2: "add /SANDBOX/hello.txt", 3: "Done: wrote the file."},
			usage:     Usage{Turns: 1, InputTokens: 20, OutputTokens: 10},
			check: func(t *testing.T, s StreamState) {
				if s.TurnFailed || s.WaitingForUser || s.LastKind != KindTurnEnd || s.SessionID != "THREAD_ID" {
					t.Errorf("state = %+v", s)
				}
			},
		},
		{
			file:  "codex_shell.jsonl",
			kinds: "session_start turn_start command command message turn_end",
			summaries: map[int]string{
				2: `$ /bin/bash -lc "printf '%s' 'hello from mock ' > 'hello.txt'" (running)`,
				3: `$ /bin/bash -lc "printf '%s' 'hello from mock ' > 'hello.txt'" → exit 0`,
			},
			usage: Usage{Turns: 1, InputTokens: 20, OutputTokens: 10},
		},
		{
			file:  "codex_readonly.jsonl",
			kinds: "session_start turn_start message turn_end",
			usage: Usage{Turns: 1, InputTokens: 20, OutputTokens: 10},
		},
		{
			file:  "codex_fail500.jsonl",
			kinds: "session_start turn_start error error",
			check: func(t *testing.T, s StreamState) {
				if !s.TurnFailed || s.Retries != 1 {
					t.Errorf("state = %+v", s)
				}
			},
		},
		{
			file:      "codex_deadport.jsonl",
			kinds:     "session_start turn_start error error",
			summaries: map[int]string{3: "turn failed: Connection failed: error sending request"},
			check: func(t *testing.T, s StreamState) {
				if !s.TurnFailed {
					t.Errorf("state = %+v", s)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			data := fixture(t, tt.file)
			format := strings.SplitN(tt.file, "_", 2)[0]
			for _, f := range []string{format, FormatAuto} {
				evs, p := parse(t, f, data)
				if got := kinds(evs); got != tt.kinds {
					t.Errorf("format %q: kinds = %q, want %q", f, got, tt.kinds)
				}
				for i, want := range tt.summaries {
					if i >= len(evs) || evs[i].Summary != want {
						t.Errorf("event %d summary = %q, want %q", i, evs[min(i, len(evs)-1)].Summary, want)
					}
				}
				if got := p.Usage(); !reflect.DeepEqual(got, tt.usage) {
					t.Errorf("usage = %+v, want %+v", got, tt.usage)
				}
				st := p.State()
				if st.Unknown != 0 {
					t.Errorf("%d unknown events", st.Unknown)
				}
				if tt.check != nil {
					tt.check(t, st)
				}
				for _, ev := range evs {
					if strings.Contains(ev.Summary, "\n") || len([]rune(ev.Summary)) > summaryRunes+30 {
						t.Errorf("summary not one short line: %q", ev.Summary)
					}
					if ev.Line < 1 || !ev.Time.Equal(fixedTime) {
						t.Errorf("event line/time = %d/%v", ev.Line, ev.Time)
					}
				}
			}
		})
	}
}

// Every fixture line is accounted for: every line number appears in some event
// except codex's item.started file_change, which is reported on completion.
func TestFixturesEveryLineParsed(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("..", "..", "testdata", "fixtures", "stream", "*.jsonl"))
	if len(files) < 10 {
		t.Fatalf("only %d fixtures", len(files))
	}
	for _, f := range files {
		data, _ := os.ReadFile(f)
		evs, _ := parse(t, FormatAuto, data)
		seen := map[int64]bool{}
		for _, ev := range evs {
			seen[ev.Line] = true
			if ev.Kind == KindUnknown {
				t.Errorf("%s: unknown event %+v", f, ev)
			}
		}
		for i, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
			if !seen[int64(i+1)] && !strings.Contains(l, `"item.started","item":{"id":"item_0","type":"file_change"`) {
				t.Errorf("%s: line %d produced no event: %.100s", filepath.Base(f), i+1, l)
			}
		}
	}
}

// Feeding a fixture split at every byte offset, and byte by byte, gives the
// same stream.jsonl as one chunk.
func TestChunkBoundaries(t *testing.T) {
	for _, name := range []string{"codex_shell.jsonl", "claude_retry503.jsonl"} {
		data := fixture(t, name)
		var want bytes.Buffer
		p := NewParser("", &want)
		p.setClock(func() time.Time { return fixedTime })
		p.Write(data)
		p.Flush()
		for i := 0; i <= len(data) && name == "codex_shell.jsonl"; i++ { // every split of a small fixture
			var got bytes.Buffer
			p := NewParser("", &got)
			p.setClock(func() time.Time { return fixedTime })
			p.Write(data[:i])
			p.Write(data[i:])
			p.Flush()
			if got.String() != want.String() {
				t.Fatalf("%s split at %d:\n%s\nwant\n%s", name, i, got.String(), want.String())
			}
		}
		var got bytes.Buffer
		p = NewParser("", &got)
		p.setClock(func() time.Time { return fixedTime })
		for i := range data {
			p.Write(data[i : i+1])
		}
		p.Flush()
		if got.String() != want.String() {
			t.Fatalf("%s byte by byte differs", name)
		}
	}
}

func TestTruncatedFinalLine(t *testing.T) {
	data := fixture(t, "codex_success.jsonl")
	data = bytes.TrimRight(data, "\n")
	partial := data[:len(data)-10] // the turn.completed line cut short
	var out bytes.Buffer
	p := NewParser(FormatCodex, &out)
	p.Write(partial)
	if got := kinds(decode(t, out.Bytes())); got != "session_start turn_start file_change message" {
		t.Fatalf("before Flush kinds = %q (the partial line must wait)", got)
	}
	p.Flush()
	evs := decode(t, out.Bytes())
	last := evs[len(evs)-1]
	if last.Kind != KindUnknown || last.SourceType != "malformed" {
		t.Fatalf("truncated last line gave %+v", last)
	}
	// A complete last line without a newline parses at Flush.
	evs, _ = parse(t, FormatCodex, data)
	if got := kinds(evs); got != "session_start turn_start file_change message turn_end" {
		t.Fatalf("kinds = %q", got)
	}
}

func TestUnknownAndGarbage(t *testing.T) {
	in := strings.Join([]string{
		`{"type":"system","subtype":"init","session_id":"s1","model":"m","cwd":"/w"}`,
		`not json at all`,
		`{"type":"brand_new_thing","x":1}`,
		``,
		`   `,
		`{"no_type":true}`,
		`[1,2,3]`,
		`{"type":"system","subtype":"compact_boundary"}`,
		"\x00\xff\xfe binary",
		`{"type":"assistant","message":{"content":[{"type":"text","text":"line one\nline two"},{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"go test ./...\necho ok"}}]}}`,
		`{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t1","content":[{"type":"text","text":"ok"}],"is_error":false}]}}`,
		`{"type":"thread.started","thread_id":"th"}`,
		`{"type":"item.completed","item":{"id":"i","type":"brand_new_item"}}`,
		`{"type":"item.completed","item":{"id":"i","type":"command_execution","command":"false","exit_code":1,"status":"failed"}}`,
		`{"type":"assistant","message":{"content":"oops`, // truncated mid-line, then more lines
		`{"type":"stream_event","event":{}}`,
		`{"type":"turn.completed","usage":{"input_tokens":5,"output_tokens":2}}`,
		`{"type":"turn.completed","usage":{"input_tokens":7,"output_tokens":3}}`,
	}, "\n") + "\n"
	evs, p := parse(t, FormatAuto, []byte(in))
	want := []struct{ kind, src string }{
		{KindSessionStart, "system/init"},
		{KindUnknown, "malformed"},
		{KindUnknown, "brand_new_thing"},
		{KindUnknown, "(no type)"},
		{KindUnknown, "malformed"},
		{KindUnknown, "system/compact_boundary"},
		{KindUnknown, "malformed"},
		{KindMessage, "assistant/text"},
		{KindToolCall, "assistant/tool_use"},
		{KindToolResult, "user/tool_result"},
		{KindSessionStart, "thread.started"},
		{KindUnknown, "item.completed/brand_new_item"},
		{KindCommand, "item.completed/command_execution"},
		{KindUnknown, "malformed"},
		{KindTurnEnd, "turn.completed"},
		{KindTurnEnd, "turn.completed"},
	}
	if len(evs) != len(want) {
		t.Fatalf("got %d events (%s), want %d", len(evs), kinds(evs), len(want))
	}
	for i, w := range want {
		if evs[i].Kind != w.kind || evs[i].SourceType != w.src {
			t.Errorf("event %d = %s/%s, want %s/%s", i, evs[i].Kind, evs[i].SourceType, w.kind, w.src)
		}
	}
	if s := evs[7].Summary; s != "line one line two" {
		t.Errorf("message summary = %q", s)
	}
	if s := evs[8].Summary; s != "Bash go test ./... echo ok" || evs[8].Command != "go test ./...\necho ok" {
		t.Errorf("tool_call = %q / %q", s, evs[8].Command)
	}
	if s := evs[9]; s.Summary != "Bash: ok" || s.Tool != "Bash" {
		t.Errorf("tool_result = %+v", s)
	}
	if c := evs[12]; !c.IsError || c.ExitCode == nil || *c.ExitCode != 1 || c.Summary != "$ false → exit 1" {
		t.Errorf("failed command = %+v", c)
	}
	// turn.completed carries the thread's total: the last one stands.
	if u := p.Usage(); u.Turns != 2 || u.InputTokens != 7 || u.OutputTokens != 3 {
		t.Errorf("usage = %+v", u)
	}
}

func TestOverlongLine(t *testing.T) {
	big := `{"type":"assistant","message":{"content":[{"type":"text","text":"` + strings.Repeat("x", maxLineBytes+10) + `"}]}}`
	head := `{"type":"thread.started","thread_id":"a"}` + "\n"
	tail := "\n" + `{"type":"turn.started"}` + "\n"
	for _, chunk := range []int{1 << 30, 4096, 65536 + 7} {
		var out bytes.Buffer
		p := NewParser("", &out)
		data := []byte(head + big + tail)
		for len(data) > 0 {
			n := min(chunk, len(data))
			p.Write(data[:n])
			data = data[n:]
			if cap(p.buf) > 2*maxLineBytes+chunk {
				t.Fatalf("buffer grew to %d", cap(p.buf))
			}
		}
		p.Flush()
		evs := decode(t, out.Bytes())
		if got := kinds(evs); got != "session_start unknown turn_start" {
			t.Fatalf("chunk %d: kinds = %q", chunk, got)
		}
		if evs[1].SourceType != "overlong" || evs[1].Line != 2 || evs[2].Line != 3 {
			t.Errorf("chunk %d: events = %+v", chunk, evs)
		}
	}
	// An overlong line still unterminated at EOF.
	evs, _ := parse(t, "", []byte(head+big))
	if got := kinds(evs); got != "session_start unknown" {
		t.Fatalf("unterminated: kinds = %q", got)
	}
}

func TestSummaryCut(t *testing.T) {
	long := strings.Repeat("é", 300)
	line := `{"type":"item.completed","item":{"id":"i","type":"agent_message","text":"` + long + `"}}` + "\n"
	evs, _ := parse(t, FormatCodex, []byte(line))
	r := []rune(evs[0].Summary)
	if len(r) != summaryRunes || r[len(r)-1] != '…' {
		t.Fatalf("summary has %d runes: %q", len(r), evs[0].Summary)
	}
}

// errWriter fails every write.
type errWriter struct{}

func (errWriter) Write([]byte) (int, error) { return 0, os.ErrClosed }

func TestWriteNeverFails(t *testing.T) {
	p := NewParser("", errWriter{})
	data := fixture(t, "claude_success.jsonl")
	if n, err := p.Write(data); n != len(data) || err != nil {
		t.Fatalf("Write = %d, %v", n, err)
	}
	if p.writeErr() == nil || p.Flush() == nil {
		t.Fatal("the write error is not reported by Err/Flush")
	}
	if !p.State().ResultSeen {
		t.Fatal("state not kept when stream.jsonl cannot be written")
	}
}

func TestNeedsInput(t *testing.T) {
	claude := `{"type":"assistant","message":{"content":[{"type":"text","text":"Which database should I use?"}]}}
{"type":"result","subtype":"success","is_error":false,"num_turns":1,"result":"Which database should I use?","permission_denials":[]}
`
	_, p := parse(t, FormatClaude, []byte(claude))
	if !p.State().WaitingForUser {
		t.Error("claude question: not waiting for user")
	}
	codex := `{"type":"turn.started"}
{"type":"item.completed","item":{"id":"1","type":"agent_message","text":"Shall I continue?"}}
{"type":"turn.completed","usage":{"input_tokens":1,"output_tokens":1}}
`
	_, p = parse(t, FormatCodex, []byte(codex))
	if !p.State().WaitingForUser {
		t.Error("codex question: not waiting for user")
	}
	p.Write([]byte(`{"type":"turn.started"}` + "\n"))
	if p.State().WaitingForUser {
		t.Error("a new turn does not clear WaitingForUser")
	}
}

func TestLoadStateMatchesParser(t *testing.T) {
	for _, name := range []string{"claude_success.jsonl", "claude_retry503.jsonl", "codex_shell.jsonl", "codex_fail500.jsonl"} {
		var out bytes.Buffer
		p := NewParser("", &out)
		p.setClock(func() time.Time { return fixedTime })
		p.Write(fixture(t, name))
		p.Flush()
		// A half-written last line and an overlong one are tolerated.
		out.WriteString(strings.Repeat("y", maxLineBytes+5) + "\n")
		out.WriteString(`{"kind":"mess`)
		st, u, err := LoadState(&out)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(st, p.State()) || !reflect.DeepEqual(u, p.Usage()) {
			t.Errorf("%s: LoadState = %+v %+v\nparser   = %+v %+v", name, st, u, p.State(), p.Usage())
		}
	}
}
