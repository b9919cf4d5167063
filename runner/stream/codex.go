package stream

import (
	"encoding/json"
	"fmt"
	"strings"
)

// codexLine is the union of the fields Codex's `exec --json` lines use.
type codexLine struct {
	Type     string     `json:"type"`
	ThreadID string     `json:"thread_id"`
	Message  string     `json:"message"` // top-level error
	Item     *codexItem `json:"item"`
	Error    *struct {
		Message string `json:"message"`
	} `json:"error"` // turn.failed
	Usage *struct {
		InputTokens           int64 `json:"input_tokens"`
		CachedInputTokens     int64 `json:"cached_input_tokens"`
		OutputTokens          int64 `json:"output_tokens"`
		ReasoningOutputTokens int64 `json:"reasoning_output_tokens"`
	} `json:"usage"`
}

type codexItem struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Text     string `json:"text"`
	Command  string `json:"command"`
	ExitCode *int   `json:"exit_code"`
	Status   string `json:"status"`
	Message  string `json:"message"` // error items
	Changes  []struct {
		Path string `json:"path"`
		Kind string `json:"kind"`
	} `json:"changes"`
	Server string `json:"server"` // mcp_tool_call
	Tool   string `json:"tool"`
	Query  string `json:"query"` // web_search
	Items  []struct {
		Text      string `json:"text"`
		Completed bool   `json:"completed"`
	} `json:"items"` // todo_list
}

// codex maps one Codex JSONL line to events; nil means unknown.
func (p *Parser) codex(typ string, raw []byte) []Event {
	var l codexLine
	if err := json.Unmarshal(raw, &l); err != nil {
		return []Event{{Kind: KindUnknown, SourceType: "malformed", Summary: "malformed " + typ + " line: " + cut(err.Error(), 80)}}
	}

	switch typ {
	case "thread.started":
		return []Event{{Kind: KindSessionStart, SourceType: typ, SessionID: l.ThreadID, Summary: "thread " + l.ThreadID + " started"}}
	case "turn.started":
		return []Event{{Kind: KindTurnStart, SourceType: typ, Summary: "turn started"}}
	case "turn.completed":
		// The usage is the thread's total so far (cumulative on resume).
		u := &Usage{Turns: 1}
		if l.Usage != nil {
			u.InputTokens, u.CachedInputTokens = l.Usage.InputTokens, l.Usage.CachedInputTokens
			u.OutputTokens, u.ReasoningTokens = l.Usage.OutputTokens, l.Usage.ReasoningOutputTokens
		}

		ev := Event{Kind: KindTurnEnd, SourceType: typ, Usage: u,
			Summary: fmt.Sprintf("turn completed (%d in, %d out tokens)", u.InputTokens, u.OutputTokens)}
		if p.state.LastKind == KindMessage && asksQuestion(p.state.LastMessage) {
			ev.NeedsInput = true
			ev.Summary = text("waiting for input: " + p.state.LastMessage)
		}

		return []Event{ev}
	case "turn.failed":
		msg := "turn failed"
		if l.Error != nil && l.Error.Message != "" {
			msg = "turn failed: " + l.Error.Message
		}
		return []Event{{Kind: KindError, SourceType: typ, IsError: true, Summary: text(msg)}}
	case "error":
		// Reconnect/retry notices, not fatal: turn.failed follows if it
		// gives up.
		return []Event{{Kind: KindError, SourceType: typ, Retry: true, Summary: text("retrying: " + l.Message)}}
	case "item.started", "item.updated", "item.completed":
		if l.Item == nil {
			return nil
		}
		return p.codexItem(typ, l.Item)
	}

	return nil
}

func (p *Parser) codexItem(typ string, it *codexItem) []Event {
	src := typ + "/" + it.Type
	done := typ == "item.completed"
	failed := it.Status == "failed" || it.Status == "declined"
	switch it.Type {
	case "agent_message":
		return []Event{{Kind: KindMessage, SourceType: src, Summary: text(it.Text)}}
	case "reasoning":
		return []Event{{Kind: KindMessage, SourceType: src, Summary: text("reasoning: " + it.Text)}}
	case "command_execution":
		ev := Event{Kind: KindCommand, SourceType: src, Command: it.Command}
		cmd := cut(oneLine(it.Command), summaryRunes)
		switch {
		case !done:
			ev.Summary = "$ " + cmd + " (running)"
		case it.ExitCode != nil:
			c := *it.ExitCode
			ev.ExitCode = &c
			ev.IsError = c != 0
			ev.Summary = fmt.Sprintf("$ %s → exit %d", cmd, c)
		default:
			ev.IsError = failed
			ev.Summary = "$ " + cmd + " → " + it.Status
		}

		return []Event{ev}
	case "file_change":
		if !done {
			return skip // reported once applied (or not) on item.completed
		}

		ev := Event{Kind: KindFileChange, SourceType: src, IsError: failed}
		var parts []string
		for _, c := range it.Changes {
			ev.Paths = append(ev.Paths, c.Path)
			ev.ChangeKinds = append(ev.ChangeKinds, c.Kind)
			parts = append(parts, c.Kind+" "+rel(p.cwd, c.Path))
		}

		ev.Summary = strings.Join(parts, ", ")
		if failed {
			ev.Summary += " (" + it.Status + ")"
		}

		ev.Summary = cut(ev.Summary, summaryRunes)
		return []Event{ev}
	case "mcp_tool_call":
		name := strings.TrimPrefix(it.Server+"."+it.Tool, ".")
		if !done {
			return []Event{{Kind: KindToolCall, SourceType: src, Tool: name, Summary: name}}
		}
		return []Event{{Kind: KindToolResult, SourceType: src, Tool: name, IsError: failed, Summary: name + " → " + it.Status}}
	case "web_search":
		if !done {
			return skip // the same search follows on item.completed
		}
		return []Event{{Kind: KindToolCall, SourceType: src, Tool: "web_search", Summary: text("web_search " + it.Query)}}
	case "todo_list":
		n := 0
		for _, t := range it.Items {
			if t.Completed {
				n++
			}
		}
		return []Event{{Kind: KindMessage, SourceType: src, Summary: fmt.Sprintf("plan: %d/%d done", n, len(it.Items))}}
	case "error":
		// Codex reports warnings as error items (a bypassed hook trust,
		// say); failures end the turn with turn.failed.
		return []Event{{Kind: KindError, SourceType: src, Warning: true, Summary: text("warning: " + it.Message)}}
	}

	return []Event{{Kind: KindUnknown, SourceType: src, Summary: "unknown item type " + it.Type}}
}

// codexRouterError marks the stderr line of a tool call that codex's
// sandbox or approval policy rejected: the JSONL has no item for it.
const codexRouterError = "codex_core::tools::router: error="

// codexStderr maps a codex stderr line to an event, if it is one. Every
// such line is a tool call that did not run (rejected by codex's sandbox or
// approval policy, or its sandbox failed to start one): counted as denied,
// so that a run whose writes all failed and that still ends "Done" is
// blocked with nothing changed, not ready for review.
func codexStderr(line string) (Event, bool) {
	i := strings.Index(line, codexRouterError)
	if i < 0 {
		return Event{}, false
	}
	msg := strings.TrimSpace(line[i+len(codexRouterError):])
	ev := Event{Kind: KindError, SourceType: "stderr/tools.router", IsError: true, Denied: true, Summary: text("tool failed: " + msg)}
	if strings.Contains(msg, "rejected") || strings.Contains(msg, "denied") || strings.Contains(msg, "blocked") {
		ev.Summary = text("denied: " + msg)
	}
	return ev, true
}

// CodexRefusal is the denial event of a tool output that codex's own
// sandbox or approval policy refused. Codex's session log keeps, as the
// tool's output, the text headless codex prints on stderr ("patch
// rejected: …", "exec command rejected by user", "…; rejected by user
// approval settings", "rejected: blocked by policy"); a headed codex
// shows none of it. Only the first line is looked at: a command that ran
// and failed has its exit code there, never one of these.
func CodexRefusal(output string) (Event, bool) {
	first, _, _ := strings.Cut(strings.TrimSpace(output), "\n")
	switch {
	case strings.HasPrefix(first, "patch rejected"), strings.HasPrefix(first, "exec command rejected"),
		strings.HasPrefix(first, "rejected:"), strings.Contains(first, "rejected by user approval settings"):
		return codexStderr(codexRouterError + first)
	}
	return Event{}, false
}
