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
	// assistant / user
	Message *struct {
		Content json.RawMessage `json:"content"`
	} `json:"message"`
	Error string `json:"error"` // set on synthetic assistant messages carrying an API error
	// system/api_retry
	Attempt     int  `json:"attempt"`
	MaxRetries  int  `json:"max_retries"`
	ErrorStatus *int `json:"error_status"`
	// result
	IsError           bool     `json:"is_error"`
	NumTurns          int      `json:"num_turns"`
	DurationMS        int64    `json:"duration_ms"`
	TotalCostUSD      *float64 `json:"total_cost_usd"`
	Result            string   `json:"result"`
	Errors            []string `json:"errors"`
	PermissionDenials []struct {
		ToolName string `json:"tool_name"`
	} `json:"permission_denials"`
	Usage *struct {
		InputTokens              int64 `json:"input_tokens"`
		OutputTokens             int64 `json:"output_tokens"`
		CacheCreationInputTokens int64 `json:"cache_creation_input_tokens"`
		CacheReadInputTokens     int64 `json:"cache_read_input_tokens"`
	} `json:"usage"`
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
	switch typ {
	case "system":
		return p.claudeSystem(&l)
	case "assistant":
		return p.claudeAssistant(&l)
	case "user":
		return p.claudeUser(&l)
	case "result":
		return []Event{p.claudeResult(&l)}
	case "stream_event":
		// --include-partial-messages chunks: the complete assistant
		// message follows, so the chunks add nothing.
		return skip
	}
	return nil
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
	}
	return []Event{{Kind: KindUnknown, SourceType: src, Summary: "system event " + l.Subtype}}
}

func (p *Parser) claudeAssistant(l *claudeLine) []Event {
	blocks := p.claudeBlocks(l)
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
			p.rememberTool(b.ID, b.Name)
			evs = append(evs, p.claudeToolUse(b))
		default:
			evs = append(evs, Event{Kind: KindUnknown, SourceType: "assistant/" + b.Type, Summary: "assistant content " + b.Type})
		}
	}
	if len(evs) == 0 {
		evs = append(evs, Event{Kind: KindMessage, SourceType: "assistant", Summary: ""})
	}
	return evs
}

// rememberTool keeps tool names until their results arrive, bounded so that
// results that never come cannot grow the map without limit.
func (p *Parser) rememberTool(id, name string) {
	if len(p.tools) > 1000 {
		clear(p.tools)
	}
	p.tools[id] = name
}

// claudeToolUse summarises a tool call by its name and main argument.
func (p *Parser) claudeToolUse(b claudeBlock) Event {
	var in map[string]any
	_ = json.Unmarshal(b.Input, &in)
	str := func(k string) string { s, _ := in[k].(string); return s }
	ev := Event{Kind: KindToolCall, SourceType: "assistant/tool_use", Tool: b.Name}
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
	ev.Summary = cut(oneLine(strings.TrimSpace(b.Name+" "+arg)), SummaryRunes)
	return ev
}

func (p *Parser) claudeUser(l *claudeLine) []Event {
	if l.Message == nil {
		return nil
	}
	var s string
	if json.Unmarshal(l.Message.Content, &s) == nil {
		return []Event{{Kind: KindMessage, SourceType: "user/text", Summary: text("user: " + s)}}
	}
	var evs []Event
	for _, b := range p.claudeBlocks(l) {
		switch b.Type {
		case "tool_result":
			name := p.tools[b.ToolUseID]
			delete(p.tools, b.ToolUseID)
			sum := contentText(b.Content)
			if name != "" {
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

func (p *Parser) claudeBlocks(l *claudeLine) []claudeBlock {
	if l.Message == nil {
		return nil
	}
	var blocks []claudeBlock
	_ = json.Unmarshal(l.Message.Content, &blocks)
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

// claudeResult maps the final result line. Its subtype is "success" even when
// the run failed: is_error is what tells.
func (p *Parser) claudeResult(l *claudeLine) Event {
	u := &Usage{Turns: l.NumTurns, CostUSD: l.TotalCostUSD}
	if l.Usage != nil {
		u.InputTokens = l.Usage.InputTokens + l.Usage.CacheCreationInputTokens + l.Usage.CacheReadInputTokens
		u.OutputTokens = l.Usage.OutputTokens
	}
	ev := Event{Kind: KindResult, SourceType: "result/" + l.Subtype, Subtype: l.Subtype, SessionID: l.SessionID,
		IsError: l.IsError, DurationMS: l.DurationMS, Usage: u}
	msg := l.Result
	if msg == "" && len(l.Errors) > 0 {
		msg = strings.Join(l.Errors, "; ")
	}
	if msg == "" {
		msg = l.Subtype
	}
	switch {
	case l.IsError:
		ev.Summary = text("failed: " + msg)
	case len(l.PermissionDenials) > 0:
		ev.NeedsInput = true
		ev.Summary = text(fmt.Sprintf("needs permission (%d denied, first %s): %s", len(l.PermissionDenials), l.PermissionDenials[0].ToolName, msg))
	default:
		ev.NeedsInput = asksQuestion(msg)
		ev.Summary = text(msg)
	}
	return ev
}

// asksQuestion reports whether a closing message ends by asking the user.
func asksQuestion(msg string) bool {
	return strings.HasSuffix(strings.TrimSpace(msg), "?")
}
