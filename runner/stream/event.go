// Package stream turns the JSONL that headless runners (Claude Code's
// `--output-format stream-json`, Codex's `exec --json`) print on stdout into
// normalised events, token usage and the small state that semantic status
// derivation needs.
//
// The supervisor feeds a Parser with stdout chunks as they arrive (it is an
// io.Writer, so it can sit behind an io.MultiWriter next to raw.jsonl); the
// parser writes one JSON Event per line to stream.jsonl. Nothing here ever
// returns an error that should stop an agent: malformed, unknown or overlong
// lines become events of kind "unknown".
//
// Readers in other processes (ls, show, watch) rebuild the same StreamState
// and Usage from stream.jsonl with LoadState, and DeriveStatus turns them,
// together with the invocation record, into a display status.
package stream

import "time"

// Event kinds written to stream.jsonl.
const (
	KindSessionStart = "session_start" // claude system/init, codex thread.started
	KindTurnStart    = "turn_start"    // codex turn.started
	KindMessage      = "message"       // assistant text, reasoning, thinking, plans
	KindToolCall     = "tool_call"     // claude tool_use, codex mcp/web tool calls
	KindToolResult   = "tool_result"   // claude tool_result, codex mcp results
	KindCommand      = "command"       // codex command_execution
	KindFileChange   = "file_change"   // codex file_change
	KindTurnEnd      = "turn_end"      // codex turn.completed (carries the turn's usage)
	KindResult       = "result"        // claude result (carries session totals)
	KindError        = "error"         // failures and retry notices (see Event.Retry)
	KindUnknown      = "unknown"       // unknown types, malformed or overlong lines
)

// Event is one normalised line of stream.jsonl.
type Event struct {
	Time time.Time `json:"time"`
	// Line is the 1-based line number in the runner's stdout (raw.jsonl).
	Line    int64  `json:"line"`
	Kind    string `json:"kind"`
	Summary string `json:"summary"`
	// SourceType is the runner's own type: "assistant", "system/init",
	// "item.completed/command_execution", "malformed", ….
	SourceType string `json:"source_type"`

	SessionID string `json:"session_id,omitempty"`
	Model     string `json:"model,omitempty"`
	Cwd       string `json:"cwd,omitempty"`
	Tool      string `json:"tool,omitempty"`
	Command   string `json:"command,omitempty"`
	ExitCode  *int   `json:"exit_code,omitempty"`
	// Paths are the files a tool call or file change touches.
	Paths []string `json:"paths,omitempty"`
	// ChangeKinds parallels Paths for file_change events: add, update, delete.
	ChangeKinds []string `json:"change_kinds,omitempty"`
	IsError     bool     `json:"is_error,omitempty"`
	// Retry marks a transient error notice (claude system/api_retry, codex
	// top-level error): the runner carries on, so it is not fatal.
	Retry bool `json:"retry,omitempty"`
	// NeedsInput marks a turn_end or result after which the agent waits for
	// the user (a permission it was denied, or a closing question).
	NeedsInput bool   `json:"needs_input,omitempty"`
	Subtype    string `json:"subtype,omitempty"`
	DurationMS int64  `json:"duration_ms,omitempty"`
	// Usage is the turn's usage on turn_end (added up) and the session
	// totals on result (replacing what came before).
	Usage *Usage `json:"usage,omitempty"`
}

// Usage is the token and cost account of a run.
type Usage struct {
	Turns        int      `json:"turns"`
	InputTokens  int64    `json:"input_tokens"`
	OutputTokens int64    `json:"output_tokens"`
	CostUSD      *float64 `json:"cost_usd,omitempty"`
}
