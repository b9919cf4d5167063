package mockllm

import (
	"encoding/json"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
)

// cwdRE finds the working directory claude states in its system prompt.
var cwdRE = regexp.MustCompile(`(?i)(?:Primary working directory|Working directory|cwd):\s*(\S+)`)

// anthropicPlan decides the reply blocks and stop reason for a request.
func (s *Server) anthropicPlan(body map[string]any) ([]map[string]any, string) {
	tools := toolNames(body)
	if len(tools) == 0 { // side request: title, topic, summary
		return []map[string]any{{"type": "text", "text": "Mock side reply"}}, "end_turn"
	}

	prompts, results := anthropicPrompts(body)
	if strings.Contains(last(prompts), MarkRecall) {
		return []map[string]any{{"type": "text", "text": recall(prompts)}}, "end_turn"
	}
	if results > 0 {
		return []map[string]any{{"type": "text", "text": s.cfg.Final}}, "end_turn"
	}

	a := s.ask(last(prompts))
	_, write := tools["Write"]
	if _, ok := tools["Bash"]; ok && (a.Shell != "" || !write) {
		cmd, desc := a.Shell, "Run the command"
		if cmd == "" {
			cmd, desc = s.shellScript(a.Path), "Create "+a.Path
		}
		return []map[string]any{{"type": "tool_use", "id": s.id("toolu_"), "name": "Bash",
			"input": map[string]any{"command": cmd, "description": desc}}}, "tool_use"
	}

	if write && a.Shell == "" {
		path := a.Path
		if !filepath.IsAbs(path) {
			if m := cwdRE.FindStringSubmatch(flatten(body["system"]) + "\n" + flatten(body["messages"])); m != nil {
				path = filepath.Join(m[1], path)
			}
		}

		return []map[string]any{{"type": "tool_use", "id": s.id("toolu_"), "name": "Write",
			"input": map[string]any{"file_path": path, "content": s.cfg.Content}}}, "tool_use"
	}

	return []map[string]any{{"type": "text", "text": s.cfg.Final}}, "end_turn"
}

// anthropicPrompts lists the user's own prompts of a conversation and
// counts the tool results since the latest one.
func anthropicPrompts(body map[string]any) (prompts []string, results int) {
	msgs, _ := body["messages"].([]any)
	for _, m := range msgs {
		mm, _ := m.(map[string]any)
		if str(mm["role"]) != "user" {
			continue
		}

		blocks, _ := mm["content"].([]any)
		if text, ok := mm["content"].(string); ok {
			blocks = []any{map[string]any{"type": "text", "text": text}}
		}

		for _, c := range blocks {
			cm, _ := c.(map[string]any)
			switch str(cm["type"]) {
			case "text":
				if t := str(cm["text"]); ownPrompt(t) {
					prompts, results = append(prompts, t), 0
				}
			case "tool_result":
				results++
			}
		}
	}

	return prompts, results
}

// messages answers POST /v1/messages and returns a note for the request log.
func (s *Server) messages(w http.ResponseWriter, body map[string]any) string {
	blocks, stop := s.anthropicPlan(body)
	reply := "text"
	if name := str(blocks[0]["name"]); name != "" {
		reply = "tool_call " + name
	}

	model := str(body["model"])
	if model == "" {
		model = "mock-model"
	}

	id := s.id("msg_")
	usage := map[string]any{"input_tokens": 10, "output_tokens": 5,
		"cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
	if stream, _ := body["stream"].(bool); !stream {
		writeJSON(w, http.StatusOK, map[string]any{"id": id, "type": "message", "role": "assistant", "model": model,
			"content": blocks, "stop_reason": stop, "stop_sequence": nil, "usage": usage})
		return reply
	}

	sw := startSSE(w)
	sw.event("message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": id, "type": "message", "role": "assistant", "model": model, "content": []any{},
		"stop_reason": nil, "stop_sequence": nil, "usage": map[string]any{
			"input_tokens": 10, "output_tokens": 1, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}}})
	for i, b := range blocks {
		if b["type"] == "text" {
			sw.event("content_block_start", map[string]any{"type": "content_block_start", "index": i,
				"content_block": map[string]any{"type": "text", "text": ""}})
			sw.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": i,
				"delta": map[string]any{"type": "text_delta", "text": b["text"]}})
		} else {
			input, _ := json.Marshal(b["input"])
			sw.event("content_block_start", map[string]any{"type": "content_block_start", "index": i,
				"content_block": map[string]any{"type": "tool_use", "id": b["id"], "name": b["name"], "input": map[string]any{}}})
			sw.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": i,
				"delta": map[string]any{"type": "input_json_delta", "partial_json": string(input)}})
		}

		sw.event("content_block_stop", map[string]any{"type": "content_block_stop", "index": i})
	}

	sw.event("message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": map[string]any{"output_tokens": 5}})
	sw.event("message_stop", map[string]any{"type": "message_stop"})
	return reply
}
