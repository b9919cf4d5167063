package mockllm

import (
	"encoding/json"
	"net/http"
	"strings"
	"time"
)

// responsesPrompts lists the user's own prompts of a conversation and
// counts the tool outputs since the latest one.
func responsesPrompts(body map[string]any) (prompts []string, outputs int) {
	input, _ := body["input"].([]any)
	for _, i := range input {
		m, _ := i.(map[string]any)
		switch typ := str(m["type"]); {
		case (typ == "" || typ == "message") && str(m["role"]) == "user":
			var text string
			if t, ok := m["content"].(string); ok {
				text = t
			} else {
				content, _ := m["content"].([]any)
				var parts []string
				for _, c := range content {
					cm, _ := c.(map[string]any)
					parts = append(parts, str(cm["text"]))
				}
				text = strings.Join(parts, "\n")
			}

			if ownPrompt(text) {
				prompts, outputs = append(prompts, text), 0
			}
		case typ == "function_call_output" || typ == "custom_tool_call_output":
			outputs++
		}
	}

	return prompts, outputs
}

// message is an assistant message item saying text.
func (s *Server) message(text string) map[string]any {
	return map[string]any{"type": "message", "id": s.id("msg_"), "role": "assistant", "status": "completed",
		"content": []any{map[string]any{"type": "output_text", "text": text, "annotations": []any{}}}}
}

// responsesToolCall builds a call of the first usable tool codex offers:
// apply_patch (to add the file), else a shell tool. nil if there is none.
func (s *Server) responsesToolCall(body map[string]any) map[string]any {
	tools := toolNames(body)
	callID := s.id("call_")
	fc := func(name string, args any) map[string]any {
		a, _ := json.Marshal(args)
		return map[string]any{"type": "function_call", "id": "fc_" + callID[5:], "status": "completed",
			"name": name, "arguments": string(a), "call_id": callID}
	}

	// A prompt that mentions MOCK_SHELL asks for a shell command instead
	// of the patch; @@BASH@@ and @@SHELL@@ for a given one.
	prompts, _ := responsesPrompts(body)
	a := s.ask(last(prompts))
	if t, ok := tools["apply_patch"]; ok && a.Shell == "" && !strings.Contains(flatten(body["input"]), "MOCK_SHELL") {
		var b strings.Builder
		b.WriteString("*** Begin Patch\n*** Add File: " + a.Path + "\n")
		for _, l := range strings.Split(strings.TrimSuffix(s.cfg.Content, "\n"), "\n") {
			b.WriteString("+" + l + "\n")
		}

		b.WriteString("*** End Patch\n")

		if str(t["type"]) == "custom" { // freeform tool: the patch is the input
			return map[string]any{"type": "custom_tool_call", "id": "ctc_" + callID[5:], "status": "completed",
				"name": "apply_patch", "input": b.String(), "call_id": callID}
		}

		return fc("apply_patch", map[string]any{"input": b.String()})
	}

	script := a.Shell
	if script == "" {
		script = s.shellScript(a.Path)
	}

	switch {
	case tools["exec_command"] != nil && a.Escalate:
		return fc("exec_command", map[string]any{"cmd": script, "sandbox_permissions": "require_escalated",
			"justification": "May I run it outside the sandbox?"})
	case tools["exec_command"] != nil:
		return fc("exec_command", map[string]any{"cmd": script})
	case tools["shell_command"] != nil:
		return fc("shell_command", map[string]any{"command": script})
	case tools["shell"] != nil:
		return fc("shell", map[string]any{"command": []string{"bash", "-lc", script}})
	}

	return nil
}

// responses answers POST …/responses (always streamed, as codex asks) and
// returns a note for the request log.
func (s *Server) responses(w http.ResponseWriter, body map[string]any) string {
	var item map[string]any
	prompts, outputs := responsesPrompts(body)
	text := s.cfg.Final
	switch {
	case strings.Contains(last(prompts), MarkRecall):
		text = recall(prompts)
	case outputs == 0:
		item = s.responsesToolCall(body)
	}

	reply := "text"
	if item == nil {
		item = s.message(text)
	} else {
		reply = "tool_call " + str(item["name"])
	}

	model := str(body["model"])
	if model == "" {
		model = "mock-model"
	}

	resp := map[string]any{"id": s.id("resp_"), "object": "response", "created_at": time.Now().Unix(),
		"status": "in_progress", "model": model, "output": []any{}}
	sw := startSSE(w)
	sw.event("response.created", map[string]any{"type": "response.created", "response": resp})
	sw.event("response.output_item.added", map[string]any{"type": "response.output_item.added", "output_index": 0, "item": item})
	if item["type"] == "message" {
		sw.event("response.output_text.delta", map[string]any{"type": "response.output_text.delta",
			"item_id": item["id"], "output_index": 0, "content_index": 0, "delta": text})
	}

	sw.event("response.output_item.done", map[string]any{"type": "response.output_item.done", "output_index": 0, "item": item})
	done := map[string]any{}
	for k, v := range resp {
		done[k] = v
	}

	done["status"], done["output"] = "completed", []any{item}
	done["usage"] = map[string]any{"input_tokens": 10, "input_tokens_details": map[string]any{"cached_tokens": 0},
		"output_tokens": 5, "output_tokens_details": map[string]any{"reasoning_tokens": 0}, "total_tokens": 15}
	sw.event("response.completed", map[string]any{"type": "response.completed", "response": done})
	return reply
}
