package stream

import (
	"encoding/json"
	"fmt"
	"strings"
)

// claudeLine is the union of the fields Claude Code's stream-json lines use.
type claudeLine struct {
	Type      string `json:"type"`
	Subtype   string `json:"subtype"`
	SessionID string `json:"session_id"`
	Cwd       string `json:"cwd"`
	Model     string `json:"model"`
	// Message is an object on assistant and user lines, a string on
	// system/permission_denied.
	Message json.RawMessage `json:"message"`
	Error   string          `json:"error"` // set on synthetic assistant messages carrying an API error
	// A subagent's lines name it.
	ParentToolUseID string `json:"parent_tool_use_id"`
	AgentID         string `json:"agent_id"`
	// system/api_retry
	Attempt     int  `json:"attempt"`
	MaxRetries  int  `json:"max_retries"`
	ErrorStatus *int `json:"error_status"`
	// system/permission_denied
	ToolName  string `json:"tool_name"`
	ToolUseID string `json:"tool_use_id"`
	// system/hook_started, hook_response
	HookName string `json:"hook_name"`
	Outcome  string `json:"outcome"`
	ExitCode *int   `json:"exit_code"`
	Stderr   string `json:"stderr"`
	// system/task_*, background_tasks_changed, thinking_tokens
	TaskID          string                   `json:"task_id"`
	Description     string                   `json:"description"`
	Status          string                   `json:"status"`
	Summary         string                   `json:"summary"`
	LastToolName    string                   `json:"last_tool_name"`
	Patch           *struct{ Status string } `json:"patch"`
	Tasks           []json.RawMessage        `json:"tasks"`
	EstimatedTokens int64                    `json:"estimated_tokens"`
	// result
	IsError           bool     `json:"is_error"`
	NumTurns          int      `json:"num_turns"`
	DurationMS        int64    `json:"duration_ms"`
	TotalCostUSD      *float64 `json:"total_cost_usd"`
	Result            string   `json:"result"`
	Errors            []string `json:"errors"`
	TerminalReason    string   `json:"terminal_reason"`
	APIErrorStatus    *int     `json:"api_error_status"`
	PermissionDenials []struct {
		ToolName string `json:"tool_name"`
	} `json:"permission_denials"`
	Usage      *claudeUsage                `json:"usage"`
	ModelUsage map[string]claudeModelUsage `json:"modelUsage"`
}

// claudeMessage is the message object of assistant and user lines.
type claudeMessage struct {
	ID      string          `json:"id"`
	Content json.RawMessage `json:"content"`
	Usage   *claudeUsage    `json:"usage"`
}

// claudeUsage is the usage of one message (assistant lines) or of this run
// only (result lines).
type claudeUsage struct {
	InputTokens              int64 `json:"input_tokens"`
	OutputTokens             int64 `json:"output_tokens"`
	CacheCreationInputTokens int64 `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int64 `json:"cache_read_input_tokens"`
}

func (u *claudeUsage) usage() *Usage {
	return &Usage{InputTokens: u.InputTokens + u.CacheCreationInputTokens + u.CacheReadInputTokens,
		CachedInputTokens: u.CacheReadInputTokens, OutputTokens: u.OutputTokens}
}

// claudeModelUsage is one model's entry in result.modelUsage: the session's
// totals, subagents and earlier runs of a resumed session included.
type claudeModelUsage struct {
	InputTokens              int64   `json:"inputTokens"`
	OutputTokens             int64   `json:"outputTokens"`
	CacheReadInputTokens     int64   `json:"cacheReadInputTokens"`
	CacheCreationInputTokens int64   `json:"cacheCreationInputTokens"`
	ThinkingTokens           int64   `json:"thinkingTokens"`
	CostUSD                  float64 `json:"costUSD"`
}

type claudeBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	Thinking  string          `json:"thinking"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	IsError   bool            `json:"is_error"`
}

// claude maps one Claude Code stream-json line to events; nil means unknown.
func (p *Parser) claude(typ string, raw []byte) []Event {
	var l claudeLine
	if err := json.Unmarshal(raw, &l); err != nil {
		return []Event{{Kind: KindUnknown, SourceType: "malformed", Summary: "malformed " + typ + " line: " + cut(err.Error(), 80)}}
	}

	var evs []Event
	switch typ {
	case "system":
		evs = p.claudeSystem(&l)
	case "assistant":
		evs = p.claudeAssistant(&l)
	case "user":
		evs = p.claudeUser(&l)
	case "result":
		evs = []Event{p.claudeResult(&l)}
	case "stream_event":
		// --include-partial-messages chunks: the complete assistant
		// message follows, so the chunks add nothing.
		return skip
	default:
		return nil
	}

	if agent, label := p.subagent(&l); agent != "" {
		for i := range evs {
			evs[i].Agent = agent
			evs[i].Summary = "[" + label + "] " + evs[i].Summary
		}
	}

	return evs
}

// subagent names the subagent a line belongs to: its agent_id (else the
// Task call's id) and a label for summaries (the task's description).
func (p *Parser) subagent(l *claudeLine) (agent, label string) {
	if l.ParentToolUseID == "" {
		return "", ""
	}

	agent = l.AgentID
	if agent == "" {
		agent = l.ParentToolUseID
	}

	label = p.tasks[l.ParentToolUseID]
	if label == "" {
		label = "subagent"
	}

	return agent, label
}

func (p *Parser) claudeSystem(l *claudeLine) []Event {
	src := "system/" + l.Subtype
	switch l.Subtype {
	case "init":
		p.cwd = l.Cwd
		return []Event{{Kind: KindSessionStart, SourceType: src, SessionID: l.SessionID, Model: l.Model, Cwd: l.Cwd,
			Summary: fmt.Sprintf("session %s started (model %s)", l.SessionID, l.Model)}}
	case "api_retry":
		s := fmt.Sprintf("API retry %d/%d", l.Attempt, l.MaxRetries)
		if l.ErrorStatus != nil {
			s += fmt.Sprintf(" after HTTP %d", *l.ErrorStatus)
		}
		if l.Error != "" {
			s += " (" + l.Error + ")"
		}
		return []Event{{Kind: KindError, SourceType: src, Summary: s, Retry: true}}
	case "permission_denied":
		p.denied++
		var msg string
		_ = json.Unmarshal(l.Message, &msg)
		if p.cwd != "" {
			msg = strings.ReplaceAll(msg, p.cwd+"/", "")
		}
		return []Event{{Kind: KindError, SourceType: src, Tool: l.ToolName, Denied: true,
			Summary: text("permission denied: " + l.ToolName + ": " + msg)}}
	case "hook_started":
		return []Event{{Kind: KindHook, SourceType: src, Summary: text("hook " + l.HookName + " started")}}
	case "hook_response":
		failed := (l.Outcome != "" && l.Outcome != "success") || (l.ExitCode != nil && *l.ExitCode != 0)
		if !failed {
			return []Event{{Kind: KindHook, SourceType: src, Summary: text("hook " + l.HookName + " " + orDefault(l.Outcome, "done"))}}
		}

		s := "hook " + l.HookName + " failed"
		if l.ExitCode != nil {
			s += fmt.Sprintf(" (exit %d)", *l.ExitCode)
		}
		if l.Stderr != "" {
			s += ": " + l.Stderr
		}

		return []Event{{Kind: KindError, SourceType: src, IsError: true, ExitCode: l.ExitCode, Summary: text(s)}}
	case "task_started":
		if l.ToolUseID != "" && l.Description != "" {
			p.remember(p.tasks, l.ToolUseID, l.Description)
		}
		return []Event{{Kind: KindTask, SourceType: src, Summary: text("task started: " + l.Description)}}
	case "task_progress":
		s := "task: " + l.Description
		if l.LastToolName != "" {
			s += " (" + l.LastToolName + ")"
		}
		return []Event{{Kind: KindTask, SourceType: src, Summary: text(s)}}
	case "task_updated":
		st := ""
		if l.Patch != nil {
			st = l.Patch.Status
		}
		return []Event{{Kind: KindTask, SourceType: src, Summary: text("task " + l.TaskID + " " + orDefault(st, "updated"))}}
	case "task_notification":
		s := "task " + orDefault(l.Status, "done")
		if l.Summary != "" {
			s += ": " + l.Summary
		}
		return []Event{{Kind: KindTask, SourceType: src, IsError: l.Status == "failed", Summary: text(s)}}
	case "background_tasks_changed":
		return []Event{{Kind: KindTask, SourceType: src, Summary: fmt.Sprintf("%d background tasks", len(l.Tasks))}}
	case "thinking_tokens":
		return []Event{{Kind: KindProgress, SourceType: src, Summary: fmt.Sprintf("thinking (~%d tokens)", l.EstimatedTokens)}}
	}

	return []Event{{Kind: KindUnknown, SourceType: src, Summary: "system event " + l.Subtype}}
}

func (p *Parser) claudeAssistant(l *claudeLine) []Event {
	m := claudeMsg(l)
	blocks := claudeBlocks(m)
	if l.Error != "" {
		// A synthetic message carrying an API error ("API Error: 500 …").
		var msg []string
		for _, b := range blocks {
			if b.Type == "text" {
				msg = append(msg, b.Text)
			}
		}

		return []Event{{Kind: KindError, SourceType: "assistant", IsError: true,
			Summary: text(l.Error + ": " + strings.Join(msg, " "))}}
	}

	var evs []Event
	for _, b := range blocks {
		switch b.Type {
		case "text":
			evs = append(evs, Event{Kind: KindMessage, SourceType: "assistant/text", Summary: text(b.Text)})
		case "thinking":
			evs = append(evs, Event{Kind: KindMessage, SourceType: "assistant/thinking", Summary: text("thinking: " + b.Thinking)})
		case "tool_use":
			p.remember(p.tools, b.ID, b.Name)
			evs = append(evs, p.claudeToolUse(b))
		default:
			evs = append(evs, Event{Kind: KindUnknown, SourceType: "assistant/" + b.Type, Summary: "assistant content " + b.Type})
		}
	}

	if len(evs) == 0 {
		evs = append(evs, Event{Kind: KindMessage, SourceType: "assistant", Summary: ""})
	}

	// Claude prints one line per content block of a message, each with the
	// message's usage: count it once, on the message's first line.
	if m != nil && m.Usage != nil && (m.ID == "" || m.ID != p.lastMsgID) {
		p.lastMsgID = m.ID
		evs[0].Usage = m.Usage.usage()
	}

	return evs
}

// remember keeps an id's name (tool names until their results arrive,
// subagent labels), bounded so that ids that are never looked up cannot
// grow the map without limit.
func (p *Parser) remember(m map[string]string, id, name string) {
	if len(m) > 1000 {
		clear(m)
	}
	m[id] = name
}

// claudeToolUse summarises a tool call by its name and main argument.
func (p *Parser) claudeToolUse(b claudeBlock) Event {
	var in map[string]any
	_ = json.Unmarshal(b.Input, &in)
	str := func(k string) string { s, _ := in[k].(string); return s }
	ev := Event{Kind: KindToolCall, SourceType: "assistant/tool_use", Tool: b.Name}

	if (b.Name == "Task" || b.Name == "Agent") && str("description") != "" {
		p.remember(p.tasks, b.ID, str("description"))
	}

	arg := ""
	if path := str("file_path"); path != "" {
		ev.Paths = []string{path}
		arg = rel(p.cwd, path)
	} else if path := str("notebook_path"); path != "" {
		ev.Paths = []string{path}
		arg = rel(p.cwd, path)
	} else if c := str("command"); c != "" {
		ev.Command = c
		arg = c
	} else {
		for _, k := range []string{"pattern", "path", "url", "query", "description", "prompt", "skill"} {
			if s := str(k); s != "" {
				arg = s
				break
			}
		}
	}

	ev.Summary = cut(oneLine(strings.TrimSpace(b.Name+" "+arg)), summaryRunes)
	return ev
}

func (p *Parser) claudeUser(l *claudeLine) []Event {
	m := claudeMsg(l)
	if m == nil {
		return nil
	}

	var s string
	if json.Unmarshal(m.Content, &s) == nil {
		return []Event{{Kind: KindMessage, SourceType: "user/text", Summary: text("user: " + s)}}
	}

	var evs []Event
	for _, b := range claudeBlocks(m) {
		switch b.Type {
		case "tool_result":
			name := p.tools[b.ToolUseID]
			delete(p.tools, b.ToolUseID)
			sum := contentText(b.Content)
			if p.cwd != "" {
				sum = strings.ReplaceAll(sum, p.cwd+"/", "")
			}

			switch {
			case b.IsError && name != "":
				sum = name + " failed: " + sum
			case b.IsError:
				sum = "failed: " + sum
			case name != "":
				sum = name + ": " + sum
			}

			evs = append(evs, Event{Kind: KindToolResult, SourceType: "user/tool_result", Tool: name, IsError: b.IsError, Summary: text(sum)})
		case "text":
			evs = append(evs, Event{Kind: KindMessage, SourceType: "user/text", Summary: text("user: " + b.Text)})
		default:
			evs = append(evs, Event{Kind: KindUnknown, SourceType: "user/" + b.Type, Summary: "user content " + b.Type})
		}
	}

	if len(evs) == 0 {
		return []Event{{Kind: KindMessage, SourceType: "user", Summary: "user:"}}
	}

	return evs
}

// claudeMsg decodes the message object of an assistant or user line.
func claudeMsg(l *claudeLine) *claudeMessage {
	var m claudeMessage
	if len(l.Message) == 0 || json.Unmarshal(l.Message, &m) != nil {
		return nil
	}
	return &m
}

func claudeBlocks(m *claudeMessage) []claudeBlock {
	if m == nil {
		return nil
	}
	var blocks []claudeBlock
	_ = json.Unmarshal(m.Content, &blocks)
	return blocks
}

// contentText flattens a tool_result content (a string or text blocks).
func contentText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}

	var blocks []claudeBlock
	_ = json.Unmarshal(raw, &blocks)
	var parts []string
	for _, b := range blocks {
		if b.Text != "" {
			parts = append(parts, b.Text)
		} else if b.Type != "" {
			parts = append(parts, "["+b.Type+"]")
		}
	}

	return strings.Join(parts, " ")
}

// claudeResult maps a result line; a run may print several (result_index).
// Its subtype is "success" even when the run failed: is_error is what
// tells. Its usage is the session's total (modelUsage, total_cost_usd:
// subagents and earlier runs of a resumed session included); its "usage"
// is this run's main agent only and serves when modelUsage is missing.
func (p *Parser) claudeResult(l *claudeLine) Event {
	u := &Usage{Turns: l.NumTurns}
	if len(l.ModelUsage) > 0 {
		var cost float64
		for _, m := range l.ModelUsage {
			u.InputTokens += m.InputTokens + m.CacheReadInputTokens + m.CacheCreationInputTokens
			u.CachedInputTokens += m.CacheReadInputTokens
			u.OutputTokens += m.OutputTokens
			u.ReasoningTokens += m.ThinkingTokens
			cost += m.CostUSD
		}

		u.CostUSD = &cost
	} else if l.Usage != nil {
		t := l.Usage.usage()
		t.Turns = u.Turns
		u = t
	}

	if l.TotalCostUSD != nil {
		u.CostUSD = l.TotalCostUSD
	}

	p.lastMsgID = ""
	defer func() { p.denied = 0 }()
	ev := Event{Kind: KindResult, SourceType: "result/" + l.Subtype, Subtype: l.Subtype, SessionID: l.SessionID,
		IsError: l.IsError, DurationMS: l.DurationMS, Usage: u,
		TerminalReason: l.TerminalReason, APIErrorStatus: l.APIErrorStatus}
	msg := l.Result
	if msg == "" && len(l.Errors) > 0 {
		msg = strings.Join(l.Errors, "; ")
	}
	if msg == "" {
		msg = l.Subtype
	}

	// Why the run ended, when that is not simply "completed".
	var why []string
	if l.TerminalReason != "" && l.TerminalReason != "completed" {
		why = append(why, l.TerminalReason)
	}
	if l.APIErrorStatus != nil {
		why = append(why, fmt.Sprintf("HTTP %d", *l.APIErrorStatus))
	}

	reason := ""
	if len(why) > 0 {
		reason = " (" + strings.Join(why, ", ") + ")"
	}

	switch {
	case l.IsError:
		ev.Summary = text("failed" + reason + ": " + msg)
	case len(l.PermissionDenials) > 0:
		ev.NeedsInput = true
		// Claude before 2.1.2xx lists denials only here.
		ev.Denied = len(l.PermissionDenials) > p.denied
		ev.Summary = text(fmt.Sprintf("needs permission (%d denied, first %s)%s: %s", len(l.PermissionDenials), l.PermissionDenials[0].ToolName, reason, msg))
	default:
		ev.NeedsInput = asksQuestion(msg)
		ev.Summary = text(strings.TrimPrefix(reason+" ", " ") + msg)
	}

	return ev
}

// asksQuestion reports whether a closing message ends by asking the user.
func asksQuestion(msg string) bool {
	return strings.HasSuffix(strings.TrimSpace(msg), "?")
}
