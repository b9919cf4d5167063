package mockllm

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

func start(t *testing.T) *Server {
	t.Helper()
	s, err := Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

var client = &http.Client{Timeout: 10 * time.Second}

func post(t *testing.T, url string, body any) *http.Response {
	t.Helper()
	b, _ := json.Marshal(body)
	resp, err := client.Post(url, "application/json", strings.NewReader(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// events reads a whole SSE body into its data objects.
func events(t *testing.T, r io.Reader) []map[string]any {
	t.Helper()
	var out []map[string]any
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			var m map[string]any
			if err := json.Unmarshal([]byte(d), &m); err != nil {
				t.Fatalf("bad SSE data %q: %v", d, err)
			}
			out = append(out, m)
		}
	}
	return out
}

func TestRefusesNonLoopback(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:0", ":0", "192.0.2.1:0"} {
		if s, err := Start(addr); err == nil {
			s.Close()
			t.Errorf("Start(%q) accepted", addr)
		}
	}
}

func TestAnthropicLoop(t *testing.T) {
	s := start(t)
	tools := []any{map[string]any{"name": "Bash"}, map[string]any{"name": "Write"}}
	first := map[string]any{"model": "claude-x", "stream": true, "tools": tools,
		"system":   []any{map[string]any{"type": "text", "text": "Primary working directory: /work/sb\nIs a git repo: yes"}},
		"messages": []any{map[string]any{"role": "user", "content": "Create hello.txt"}}}
	resp := post(t, s.URL()+"/v1/messages?beta=true", first)
	if ct := resp.Header.Get("Content-Type"); resp.StatusCode != 200 || ct != "text/event-stream" {
		t.Fatalf("status %d, content type %q", resp.StatusCode, ct)
	}
	evs := events(t, resp.Body)
	var types []string
	var input string
	for _, e := range evs {
		types = append(types, e["type"].(string))
		if d, ok := e["delta"].(map[string]any); ok && d["type"] == "input_json_delta" {
			input = d["partial_json"].(string)
		}
	}
	want := "message_start content_block_start content_block_delta content_block_stop message_delta message_stop"
	if got := strings.Join(types, " "); got != want {
		t.Fatalf("events %q, want %q", got, want)
	}
	var in map[string]string
	if err := json.Unmarshal([]byte(input), &in); err != nil || in["file_path"] != "/work/sb/hello.txt" || in["content"] != "hello from mock\n" {
		t.Fatalf("tool input %q: %v", input, err)
	}
	if block := evs[1]["content_block"].(map[string]any); block["name"] != "Write" || evs[4]["delta"].(map[string]any)["stop_reason"] != "tool_use" {
		t.Fatalf("not a Write tool call: %v", evs)
	}

	// After the tool result: the final text, here without streaming.
	second := map[string]any{"model": "claude-x", "tools": tools, "messages": []any{
		map[string]any{"role": "user", "content": "Create hello.txt"},
		map[string]any{"role": "user", "content": []any{map[string]any{"type": "tool_result", "tool_use_id": "x", "content": "ok"}}}}}
	var msg struct {
		Content []struct{ Type, Text string }
		Stop    string `json:"stop_reason"`
	}
	if err := json.NewDecoder(post(t, s.URL()+"/v1/messages", second).Body).Decode(&msg); err != nil {
		t.Fatal(err)
	}
	if len(msg.Content) != 1 || msg.Content[0].Text != "Done: wrote the file." || msg.Stop != "end_turn" {
		t.Fatalf("final reply %+v", msg)
	}

	// Side requests (no tools) and count_tokens.
	side := events(t, post(t, s.URL()+"/v1/messages", map[string]any{"stream": true, "messages": []any{}}).Body)
	if d := side[2]["delta"].(map[string]any); d["text"] != "Mock side reply" {
		t.Fatalf("side reply %v", side)
	}
	var ct map[string]int
	json.NewDecoder(post(t, s.URL()+"/v1/messages/count_tokens", map[string]any{}).Body).Decode(&ct)
	if ct["input_tokens"] != 42 {
		t.Fatalf("count_tokens %v", ct)
	}
	var replies []string
	for _, r := range s.Requests() {
		replies = append(replies, r.Reply)
	}
	if got := strings.Join(replies, ","); got != "tool_call Write,text,text,count_tokens" {
		t.Fatalf("request log %q", got)
	}
}

func TestResponsesLoop(t *testing.T) {
	s := start(t)
	tests := []struct {
		name  string
		tools []any
		check func(item map[string]any) bool
	}{
		{"apply_patch function", []any{map[string]any{"type": "function", "name": "apply_patch"}, map[string]any{"type": "function", "name": "shell"}},
			func(it map[string]any) bool {
				return it["type"] == "function_call" && it["name"] == "apply_patch" &&
					strings.Contains(it["arguments"].(string), `*** Add File: hello.txt\n+hello from mock\n*** End Patch`)
			}},
		{"apply_patch freeform", []any{map[string]any{"type": "custom", "name": "apply_patch"}},
			func(it map[string]any) bool {
				return it["type"] == "custom_tool_call" && strings.HasPrefix(it["input"].(string), "*** Begin Patch\n")
			}},
		{"exec_command", []any{map[string]any{"type": "function", "name": "exec_command"}},
			func(it map[string]any) bool {
				var args map[string]string
				json.Unmarshal([]byte(it["arguments"].(string)), &args)
				return it["name"] == "exec_command" && args["cmd"] == "printf '%s' 'hello from mock\n' > 'hello.txt'"
			}},
		{"chat-style function", []any{map[string]any{"type": "function", "function": map[string]any{"name": "shell"}}},
			func(it map[string]any) bool { return it["name"] == "shell" }},
		{"no tools", nil,
			func(it map[string]any) bool { return it["type"] == "message" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			evs := events(t, post(t, s.URL()+"/v1/responses", map[string]any{"model": "gpt-x", "stream": true,
				"tools": tt.tools, "input": []any{map[string]any{"type": "message", "role": "user", "content": "go"}}}).Body)
			if len(evs) < 4 || evs[0]["type"] != "response.created" || evs[len(evs)-1]["type"] != "response.completed" {
				t.Fatalf("events %v", evs)
			}
			item := evs[len(evs)-2]["item"].(map[string]any)
			if !tt.check(item) {
				t.Fatalf("item %v", item)
			}
			usage := evs[len(evs)-1]["response"].(map[string]any)["usage"].(map[string]any)
			if usage["total_tokens"] != 15.0 {
				t.Fatalf("usage %v", usage)
			}
		})
	}
	// After a tool output: the final message.
	evs := events(t, post(t, s.URL()+"/v1/responses", map[string]any{"stream": true,
		"tools": []any{map[string]any{"type": "function", "name": "shell"}},
		"input": []any{map[string]any{"type": "function_call_output", "call_id": "c", "output": "ok"}}}).Body)
	item := evs[len(evs)-2]["item"].(map[string]any)
	text := item["content"].([]any)[0].(map[string]any)["text"]
	if item["type"] != "message" || text != "Done: wrote the file." {
		t.Fatalf("final item %v", item)
	}
}

func TestFailures(t *testing.T) {
	s := start(t)
	resp := post(t, s.URL()+"/fail503/v1/messages", map[string]any{"stream": true})
	var body struct {
		Error struct{ Type, Message string }
	}
	json.NewDecoder(resp.Body).Decode(&body)
	if resp.StatusCode != 503 || body.Error.Message != "mock: forced HTTP 503" {
		t.Fatalf("fail503: %d %+v", resp.StatusCode, body)
	}
	if resp := post(t, s.URL()+"/fail429/v1/responses", map[string]any{}); resp.StatusCode != 429 {
		t.Fatalf("fail429: %d", resp.StatusCode)
	}
	resp, err := client.Get(s.URL() + "/v1/models")
	if err != nil || resp.StatusCode != 404 {
		t.Fatalf("GET: %v %v", resp, err)
	}
	resp.Body.Close()

	// /hang/ never answers: the client's own deadline ends the request.
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "POST", s.URL()+"/hang/v1/messages", strings.NewReader("{}"))
	if _, err := http.DefaultClient.Do(req); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("hang: %v", err)
	}
}

func TestStallReleasedByClose(t *testing.T) {
	s, err := Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, path := range []string{"/stall/v1/messages", "/stall/v1/responses"} {
		resp := post(t, s.URL()+path, map[string]any{"stream": true})
		r := bufio.NewReader(resp.Body)
		first, err := r.ReadString('\n') // the first event arrives at once
		if err != nil || !strings.HasPrefix(first, "event: ") {
			t.Fatalf("%s: first line %q, %v", path, first, err)
		}
		if !strings.Contains(first, "message_start") && !strings.Contains(first, "response.created") {
			t.Fatalf("%s: first event %q", path, first)
		}
	}
	// A hanging request must not keep Close (or the test) waiting.
	hung := make(chan error, 1)
	go func() {
		resp, err := http.Post(s.URL()+"/hang/v1/responses", "application/json", strings.NewReader("{}"))
		if err == nil {
			resp.Body.Close()
		}
		hung <- err
	}()
	deadline := time.Now().Add(5 * time.Second)
	for len(s.Requests()) < 3 {
		if time.Now().After(deadline) {
			t.Fatal("hang request never arrived")
		}
		time.Sleep(5 * time.Millisecond)
	}
	closed := make(chan error, 1)
	go func() { closed <- s.Close() }()
	select {
	case <-closed:
	case <-time.After(5 * time.Second):
		t.Fatal("Close blocked")
	}
	select {
	case err := <-hung:
		if err == nil {
			t.Fatal("hang request got an answer")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("hang request not released by Close")
	}
}

// @@RECALL@@ quotes the conversation's first prompt (a resumed
// conversation carries it); @@BASH@@ asks for a shell command; a later
// prompt of a conversation gets its own tool call.
func TestScenarios(t *testing.T) {
	s := start(t)
	tools := []any{map[string]any{"name": "Bash"}, map[string]any{"name": "Write"}}
	reminder := map[string]any{"type": "text", "text": "<system-reminder>context</system-reminder>"}
	history := []any{
		map[string]any{"role": "user", "content": []any{reminder, map[string]any{"type": "text", "text": "Create hello.txt"}}},
		map[string]any{"role": "assistant", "content": []any{map[string]any{"type": "tool_use", "id": "t1", "name": "Write", "input": map[string]any{}}}},
		map[string]any{"role": "user", "content": []any{map[string]any{"type": "tool_result", "tool_use_id": "t1", "content": "ok"}}},
		map[string]any{"role": "assistant", "content": []any{map[string]any{"type": "text", "text": "Done"}}},
	}
	anthropic := func(prompt string) map[string]any {
		var msg struct {
			Content []struct {
				Type, Text, Name string
				Input            map[string]any
			}
		}
		msgs := append(append([]any(nil), history...), map[string]any{"role": "user", "content": prompt})
		if err := json.NewDecoder(post(t, s.URL()+"/v1/messages", map[string]any{"tools": tools, "messages": msgs}).Body).Decode(&msg); err != nil {
			t.Fatal(err)
		}
		c := msg.Content[0]
		return map[string]any{"type": c.Type, "text": c.Text, "name": c.Name, "input": c.Input}
	}
	if got := anthropic("What was it? @@RECALL@@"); got["text"] != "RECALL: first prompt was <<Create hello.txt>>; 2 user prompts in history" {
		t.Errorf("claude recall: %v", got)
	}
	if got := anthropic("@@BASH@@ run it"); got["name"] != "Bash" || got["input"].(map[string]any)["command"] != BashCommand {
		t.Errorf("claude bash: %v", got)
	}
	commit := "echo x > f && git add f && git commit -qm 'agent'"
	if got := anthropic(MarkShell + " " + commit + "\n"); got["name"] != "Bash" || got["input"].(map[string]any)["command"] != commit {
		t.Errorf("claude shell: %v", got)
	}
	if got := anthropic("Write it to " + MarkWrite + " /elsewhere/out.txt please"); got["name"] != "Write" || got["input"].(map[string]any)["file_path"] != "/elsewhere/out.txt" {
		t.Errorf("claude write to an absolute path: %v", got)
	}
	if got := anthropic("And another file"); got["name"] != "Write" {
		t.Errorf("a new prompt gets its own tool call: %v", got)
	}

	responses := func(prompt string, tools []any) map[string]any {
		input := []any{
			map[string]any{"type": "message", "role": "user", "content": []any{map[string]any{"type": "input_text", "text": "<environment_context>x</environment_context>"}}},
			map[string]any{"type": "message", "role": "user", "content": []any{map[string]any{"type": "input_text", "text": "Plan it"}}},
			map[string]any{"type": "function_call_output", "call_id": "c", "output": "ok"},
			map[string]any{"type": "message", "role": "user", "content": []any{map[string]any{"type": "input_text", "text": prompt}}},
		}
		evs := events(t, post(t, s.URL()+"/v1/responses", map[string]any{"stream": true, "tools": tools, "input": input}).Body)
		return evs[len(evs)-2]["item"].(map[string]any)
	}
	shell := []any{map[string]any{"type": "function", "name": "apply_patch"}, map[string]any{"type": "function", "name": "exec_command"}}
	item := responses("@@RECALL@@ again?", shell)
	if text := item["content"].([]any)[0].(map[string]any)["text"]; text != "RECALL: first prompt was <<Plan it>>; 2 user prompts in history" {
		t.Errorf("codex recall: %v", item)
	}
	item = responses("@@BASH@@", shell)
	if item["name"] != "exec_command" || !strings.Contains(item["arguments"].(string), BashCommand) {
		t.Errorf("codex bash: %v", item)
	}
	item = responses(MarkShell+" "+commit, shell)
	var args map[string]string
	if json.Unmarshal([]byte(item["arguments"].(string)), &args); item["name"] != "exec_command" || args["cmd"] != commit {
		t.Errorf("codex shell: %v", item)
	}
	item = responses(MarkEscalate+" "+commit, shell)
	args = nil
	if json.Unmarshal([]byte(item["arguments"].(string)), &args); args["cmd"] != commit || args["sandbox_permissions"] != "require_escalated" {
		t.Errorf("codex escalation: %v", item)
	}
	item = responses(MarkWrite+" /elsewhere/out.txt", shell)
	if item["name"] != "apply_patch" || !strings.Contains(item["arguments"].(string), "*** Add File: /elsewhere/out.txt\\n") {
		t.Errorf("codex write to an absolute path: %v", item)
	}
}
