package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// emitter prints a JSONL stream shaped like the captured real ones in
// testdata/fixtures/stream (claude 2.1.x, codex 0.169), one line at a time.
type emitter struct {
	format string
	w      io.Writer
	cwd    string
	n      int // ids handed out
	turns  int
	// session is the conversation (its id and its totals so far); resumed
	// tells a follow-up run from a first one.
	session *session
	resumed bool
	denied  []obj // claude permission_denials for the result
}

const (
	fakeSession = "00000000-0000-4000-8000-00000000fa6e"
	fakeModel   = "claude-fake-1"
)

func newEmitter(format string, w io.Writer, sess *session, resumed bool) *emitter {
	cwd, _ := os.Getwd()
	return &emitter{format: format, w: w, cwd: cwd, session: sess, resumed: resumed}
}

// obj is a JSON object that keeps its keys in the order written, as the
// real CLIs do ("type" first): o("type", "x", "id", 1).
type obj []any

func o(kv ...any) obj { return obj(kv) }

// set replaces the value of key k, or appends it.
func (m obj) set(k string, v any) obj {
	for i := 0; i+1 < len(m); i += 2 {
		if m[i] == k {
			m[i+1] = v
			return m
		}
	}
	return append(m, k, v)
}

func (m obj) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i := 0; i+1 < len(m); i += 2 {
		if i > 0 {
			b.WriteByte(',')
		}

		k, _ := json.Marshal(m[i])
		b.Write(k)
		b.WriteByte(':')
		v, err := marshal(m[i+1])
		if err != nil {
			return nil, err
		}

		b.Write(v)
	}

	b.WriteByte('}')
	return b.Bytes(), nil
}

// marshal encodes like json.Marshal without escaping <, > and &.
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

func (e *emitter) line(v obj) {
	b, err := marshal(v)
	if err != nil {
		panic(err) // only our own literals are encoded
	}
	fmt.Fprintf(e.w, "%s\n", b)
}

func (e *emitter) id(prefix string) string {
	e.n++
	return fmt.Sprintf("%s%04d", prefix, e.n)
}

func (e *emitter) abs(path string) string {
	if filepath.IsAbs(path) {
		return path
	}
	return filepath.Join(e.cwd, path)
}

// start prints the session start.
func (e *emitter) start() {
	if e.format == "codex" {
		e.line(o("type", "thread.started", "thread_id", e.session.ID))
		e.line(o("type", "turn.started"))
		return
	}
	e.line(o("type", "system", "subtype", "init", "cwd", e.cwd, "session_id", e.session.ID,
		"tools", []string{"Bash", "Edit", "Read", "Write"}, "mcp_servers", []any{}, "model", fakeModel,
		"permissionMode", "acceptEdits", "apiKeySource", "none", "claude_code_version", "2.1.197-fake",
		"uuid", e.id("uuid-")))
}

// write reports a file written (or appended to) as a tool call and result.
func (e *emitter) write(path, content string, appended bool) {
	abs := e.abs(path)
	if e.format == "codex" {
		kind := "add"
		if appended {
			kind = "update"
		}

		item := o("id", e.id("item_"), "type", "file_change",
			"changes", []obj{o("path", abs, "kind", kind)}, "status", "in_progress")
		e.line(o("type", "item.started", "item", item))
		item = item.set("status", "completed")
		e.line(o("type", "item.completed", "item", item))
		return
	}

	tool, input := "Write", o("file_path", abs, "content", content)
	if appended {
		tool, input = "Edit", o("file_path", abs, "old_string", "", "new_string", content)
	}

	id := e.id("toolu_fake")
	e.assistant(o("type", "tool_use", "id", id, "name", tool, "input", input))
	e.toolResult(id, "File created successfully at: "+abs)
}

// command reports a shell command that ran with exit status 0.
func (e *emitter) command(cmd, output string) {
	if e.format == "codex" {
		item := o("id", e.id("item_"), "type", "command_execution", "command", "/bin/bash -lc "+quote(cmd),
			"aggregated_output", "", "exit_code", nil, "status", "in_progress")
		e.line(o("type", "item.started", "item", item))
		item = item.set("aggregated_output", output).set("exit_code", 0).set("status", "completed")
		e.line(o("type", "item.completed", "item", item))
		return
	}
	id := e.id("toolu_fake")
	e.assistant(o("type", "tool_use", "id", id, "name", "Bash", "input", o("command", cmd, "description", "Run "+cmd)))
	e.toolResult(id, output)
}

// deny reports a write the runner refused, the way each CLI does: claude
// prints system/permission_denied and a failed tool result (and lists it in
// the result); codex prints nothing in its JSONL, only an error on stderr.
func (e *emitter) deny(path string, stderr io.Writer) {
	abs := e.abs(path)

	if e.format == "codex" {
		fmt.Fprintln(stderr, "2026-11-23T15:25:59.451708Z ERROR codex_core::tools::router: error=patch rejected: writing is blocked by read-only sandbox; rejected by user approval settings")
		return
	}

	id := e.id("toolu_fake")
	input := o("file_path", abs, "content", "x")
	e.assistant(o("type", "tool_use", "id", id, "name", "Write", "input", input))
	msg := "Claude requested permissions to write to " + abs + ", but you haven't granted it yet."
	e.line(o("type", "system", "subtype", "permission_denied", "tool_name", "Write", "tool_use_id", id,
		"message", msg, "uuid", e.id("uuid-"), "session_id", e.session.ID))
	e.line(o("type", "user", "message", o("role", "user", "content", []obj{
		o("type", "tool_result", "content", msg, "is_error", true, "tool_use_id", id)}),
		"parent_tool_use_id", nil, "session_id", e.session.ID, "uuid", e.id("uuid-")))
	e.denied = append(e.denied, o("tool_name", "Write", "tool_use_id", id, "tool_input", input))
}

func (e *emitter) assistant(block obj) {
	e.turns++
	e.line(o("type", "assistant", "message", o("id", e.id("msg_fake"), "type", "message", "role", "assistant",
		"model", fakeModel, "content", []obj{block}, "stop_reason", nil,
		"usage", o("input_tokens", 10, "output_tokens", 5)),
		"parent_tool_use_id", nil, "session_id", e.session.ID, "uuid", e.id("uuid-")))
}

func (e *emitter) toolResult(id, content string) {
	e.line(o("type", "user", "message", o("role", "user", "content", []obj{
		o("tool_use_id", id, "type", "tool_result", "content", content)}),
		"parent_tool_use_id", nil, "session_id", e.session.ID, "uuid", e.id("uuid-")))
}

// finish prints the final message and result: a failure when exit != 0, a
// question to the user when needsInput.
func (e *emitter) finish(exit int, needsInput bool) {
	text := "Done: all changes are written."
	if needsInput {
		text = "I need a decision before I go on: should I also update the tests?"
	}
	if e.resumed {
		text = fmt.Sprintf("RECALL: first prompt was <<%s>>; %d user prompts in history", e.session.FirstPrompt, e.session.Prompts)
	}

	// This run's usage; the conversation's totals, as the real CLIs
	// report them on a resumed conversation (cumulative).
	tot := e.session.add(20, 10, 0.00035)
	if e.format == "codex" {
		if exit != 0 {
			msg := "fake agent failure (exit " + fmt.Sprint(exit) + ")"
			e.line(o("type", "error", "message", msg))
			e.line(o("type", "turn.failed", "error", o("message", msg)))
			return
		}

		e.line(o("type", "item.completed", "item", o("id", e.id("item_"), "type", "agent_message", "text", text)))
		e.line(o("type", "turn.completed", "usage", o("input_tokens", tot.InputTokens, "cached_input_tokens", 0,
			"output_tokens", tot.OutputTokens, "reasoning_output_tokens", 0)))
		return
	}

	if exit != 0 {
		text = "API Error: 500 fake agent failure"
		e.line(o("type", "assistant", "message", o("id", e.id("msg_fake"), "model", "<synthetic>", "role", "assistant",
			"type", "message", "content", []obj{o("type", "text", "text", text)}),
			"session_id", e.session.ID, "uuid", e.id("uuid-"), "error", "server_error"))
	} else {
		e.assistant(o("type", "text", "text", text))
	}

	e.line(o("type", "result", "subtype", "success", "is_error", exit != 0, "duration_ms", 42,
		"num_turns", max(e.turns, 1), "result", text, "stop_reason", "end_turn", "session_id", e.session.ID,
		"total_cost_usd", tot.CostUSD, "usage", o("input_tokens", 20, "cache_creation_input_tokens", 0,
			"cache_read_input_tokens", 0, "output_tokens", 10),
		"modelUsage", o(fakeModel, o("inputTokens", tot.InputTokens, "outputTokens", tot.OutputTokens,
			"cacheReadInputTokens", 0, "cacheCreationInputTokens", 0, "costUSD", tot.CostUSD)),
		"permission_denials", append([]obj{}, e.denied...), "terminal_reason", "completed", "uuid", e.id("uuid-")))
}

// session is a conversation the fake agent keeps between runs (in
// $TMPDIR/fakeagent-sessions/<id>.json), so that -resume continues it: the
// first prompt, the number of prompts, and the usage totals.
type session struct {
	ID           string  `json:"id"`
	FirstPrompt  string  `json:"first_prompt"`
	Prompts      int     `json:"prompts"`
	InputTokens  int64   `json:"input_tokens"`
	OutputTokens int64   `json:"output_tokens"`
	CostUSD      float64 `json:"cost_usd"`
}

func sessionPath(id string) string {
	return filepath.Join(os.TempDir(), "fakeagent-sessions", filepath.Base(id)+".json")
}

// openSession starts conversation id with prompt, or with resume continues
// the one saved under id (an error when there is none, as claude says).
func openSession(id, prompt string, resume bool) (*session, error) {
	if !resume {
		return &session{ID: id, FirstPrompt: prompt, Prompts: 1}, nil
	}

	b, err := os.ReadFile(sessionPath(id))
	if err != nil {
		return nil, fmt.Errorf("no conversation found with session ID: %s", id)
	}

	var s session
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, err
	}

	s.Prompts++
	return &s, nil
}

// add counts a run's usage and returns the totals.
func (s *session) add(in, out int64, cost float64) session {
	s.InputTokens += in
	s.OutputTokens += out
	s.CostUSD += cost
	return *s
}

// save writes the conversation for a later -resume.
func (s *session) save() error {
	if err := os.MkdirAll(filepath.Dir(sessionPath(s.ID)), 0o700); err != nil {
		return err
	}
	b, err := json.Marshal(s)
	if err != nil {
		return err
	}
	return os.WriteFile(sessionPath(s.ID), b, 0o600)
}
