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
	KindError        = "error"         // failures, denials, warnings and retry notices
	KindHook         = "hook"          // claude system/hook_started, hook_response
	KindTask         = "task"          // claude system/task_*, background_tasks_changed
	KindProgress     = "progress"      // claude system/thinking_tokens
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
	// Denied marks a tool call the runner refused to run: a claude
	// permission denial, a codex patch or command rejected by its sandbox
	// or approval policy (stderr). The agent carries on; nothing ran.
	Denied bool `json:"denied,omitempty"`
	// Warning marks an error event that is only a warning (codex
	// item.completed of type error).
	Warning bool `json:"warning,omitempty"`
	// Agent names the subagent an event belongs to (claude agent_id, else
	// the parent_tool_use_id of the Task call that started it); empty for
	// the main agent.
	Agent string `json:"agent,omitempty"`
	// Retry marks a transient error notice (claude system/api_retry, codex
	// top-level error): the runner carries on, so it is not fatal.
	Retry bool `json:"retry,omitempty"`
	// NeedsInput marks a turn_end or result after which the agent waits for
	// the user (a permission it was denied, or a closing question).
	NeedsInput bool   `json:"needs_input,omitempty"`
	Subtype    string `json:"subtype,omitempty"`
	DurationMS int64  `json:"duration_ms,omitempty"`
	// TerminalReason and APIErrorStatus are claude's result fields
	// (completed, api_error, aborted_streaming; the HTTP status).
	TerminalReason string `json:"terminal_reason,omitempty"`
	APIErrorStatus *int   `json:"api_error_status,omitempty"`
	// Usage on turn_end and result is the conversation's total so far (claude's
	// modelUsage and total_cost_usd, codex's turn.completed usage are
	// cumulative, on resume too): it replaces what came before, except Turns,
	// which counts this event's turns and is added. On a message it is the
	// usage of one new model message (claude message.usage), added to the
	// last total for a live figure until the next total arrives.
	Usage *Usage `json:"usage,omitempty"`
}

// Usage is the token and cost account of a conversation.
type Usage struct {
	Turns int `json:"turns"`
	// InputTokens counts every input token, cached ones included.
	InputTokens int64 `json:"input_tokens"`
	// CachedInputTokens is the part of InputTokens read from a cache
	// (claude cache_read_input_tokens, codex cached_input_tokens).
	CachedInputTokens int64 `json:"cached_input_tokens,omitempty"`
	OutputTokens      int64 `json:"output_tokens"`
	// ReasoningTokens is the part of OutputTokens spent reasoning (codex
	// reasoning_output_tokens, claude thinkingTokens).
	ReasoningTokens int64    `json:"reasoning_tokens,omitempty"`
	CostUSD         *float64 `json:"cost_usd,omitempty"`
}
