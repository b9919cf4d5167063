package runner

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/git-agency/git-agency/store"
)

// Claude Code's hooks tell a headed run's true state: the supervisor gives
// claude `--settings <json>` (merged by claude with the user's own
// settings; no user file is touched) whose hooks run this program's hidden
// `hook-event` subcommand. It reads the hook's JSON on stdin and appends
// what the event means as one line to logs/hook.jsonl; the supervisor reads
// the new lines each poll (so two events between two polls are both seen)
// and folds them into logs/status.json. No lock, no git, always exit 0.

// hookFile is a headed invocation's hook events, one JSON line each
// (logs/hook.jsonl).
const hookFile = "hook.jsonl"

// HookEventCmd is the hidden subcommand the injected hooks run.
const HookEventCmd = "hook-event"

// claudeHookEvents are the claude hook events injected into a run.
var claudeHookEvents = []string{
	"SessionStart", "UserPromptSubmit", "PreToolUse", "PermissionRequest", "PostToolUse",
	"Notification", "Stop", "StopFailure", "SessionEnd",
}

// Agent states a hook or an OSC 7501 sequence can report.
const (
	AgentActive     = "active"
	AgentNeedsInput = "needs_input"
	AgentEnded      = "ended"
)

// HookState is one line of logs/hook.jsonl.
type HookState struct {
	Event     string    `json:"event"`
	State     string    `json:"state"` // active, needs_input, ended
	Summary   string    `json:"summary,omitempty"`
	SessionID string    `json:"session_id,omitempty"`
	Time      time.Time `json:"time"`
	// TurnDone: the event ended a turn (Stop); TurnError: with an error
	// (StopFailure).
	TurnDone  bool `json:"turn_done,omitempty"`
	TurnError bool `json:"turn_error,omitempty"`
}

// HookPath is an invocation's logs/hook.jsonl.
func HookPath(st *store.Store, inv string) string {
	return filepath.Join(st.SandboxLogsDir(inv), hookFile)
}

// ClaudeSettingsFile is the name of a run's claude settings (hooks), in its
// invocation directory.
const ClaudeSettingsFile = "claude-settings.json"

// claudeHookSettings is claude's settings JSON with a hook for every event
// in claudeHookEvents, each running `<self> hook-event --invocation <inv>
// --out <hookPath>`.
func claudeHookSettings(self, inv, hookPath string) []byte {
	cmd := shQuote(self) + " " + HookEventCmd + " --invocation " + shQuote(inv) + " --out " + shQuote(hookPath)
	type hook struct {
		Type    string `json:"type"`
		Command string `json:"command"`
		Timeout int    `json:"timeout"`
	}
	type group struct {
		Hooks []hook `json:"hooks"`
	}
	hooks := map[string][]group{}
	for _, ev := range claudeHookEvents {
		hooks[ev] = []group{{Hooks: []hook{{Type: "command", Command: cmd, Timeout: 10}}}}
	}

	b, _ := json.MarshalIndent(map[string]any{"hooks": hooks}, "", "  ")
	return append(b, '\n')
}

// WriteClaudeSettings writes claudeHookSettings to path (atomically, 0600)
// and returns argv with `--settings <path>` after the program: claude
// merges the file with the user's own settings, whose files are never
// touched. A file, not the JSON itself, keeps the command line short (tmux
// takes at most 16 KiB).
func WriteClaudeSettings(argv []string, path, self, inv, hookPath string) ([]string, error) {
	if len(argv) == 0 {
		return argv, nil
	}
	if err := store.WriteFileAtomic(path, claudeHookSettings(self, inv, hookPath), 0o600); err != nil {
		return nil, err
	}
	return append([]string{argv[0], "--settings", path}, argv[1:]...), nil
}

// shQuote quotes s for /bin/sh.
func shQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:@%+,") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// hookInput is what claude passes a hook on stdin (the fields used here).
type hookInput struct {
	Event      string          `json:"hook_event_name"`
	SessionID  string          `json:"session_id"`
	Cwd        string          `json:"cwd"`
	ToolName   string          `json:"tool_name"`
	ToolInput  json.RawMessage `json:"tool_input"`
	Message    string          `json:"message"`
	NotifyType string          `json:"notification_type"`
	LastMsg    string          `json:"last_assistant_message"`
	Error      json.RawMessage `json:"error"`
	Prompt     string          `json:"prompt"`
	Reason     string          `json:"reason"`
}

// hookStateOf says what one hook event means. ok is false for an event
// that changes nothing (an unknown event, a Notification of another kind).
func hookStateOf(data []byte, now time.Time) (HookState, bool) {
	var in hookInput
	if err := json.Unmarshal(data, &in); err != nil {
		return HookState{}, false
	}

	hs := HookState{Event: in.Event, SessionID: in.SessionID, Time: now.UTC()}
	switch in.Event {
	case "SessionStart":
		hs.State, hs.Summary = AgentActive, "session started"
	case "UserPromptSubmit":
		hs.State, hs.Summary = AgentActive, summaryText("prompt: "+in.Prompt)
		if in.Prompt == "" {
			hs.Summary = "working"
		}
	case "PreToolUse", "PostToolUse":
		hs.State, hs.Summary = AgentActive, toolSummary(in.ToolName, in.ToolInput, in.Cwd)
	case "PermissionRequest":
		hs.State, hs.Summary = AgentNeedsInput, "permission: "+toolSummary(in.ToolName, in.ToolInput, in.Cwd)
	case "Notification":
		switch in.NotifyType {
		case "permission_prompt", "idle_prompt", "elicitation_dialog":
			hs.State, hs.Summary = AgentNeedsInput, summaryText(in.Message)
		default:
			if in.NotifyType != "" || in.Message == "" {
				return HookState{}, false
			}
			// An older claude without notification_type: its messages
			// are all about waiting for the user.
			hs.State, hs.Summary = AgentNeedsInput, summaryText(in.Message)
		}
	case "Stop":
		hs.State, hs.TurnDone = AgentNeedsInput, true
		hs.Summary = summaryText(in.LastMsg)
		if hs.Summary == "" {
			hs.Summary = "turn done; waiting at its prompt"
		}
	case "StopFailure":
		hs.State, hs.TurnDone, hs.TurnError = AgentNeedsInput, true, true
		hs.Summary = summaryText("error: " + errorText(in.Error))
	case "SessionEnd":
		hs.State, hs.Summary = AgentEnded, summaryText("session ended "+in.Reason)
	default:
		return HookState{}, false
	}

	return hs, true
}

// errorText is StopFailure's error, a string or an object with a message.
func errorText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}

	var obj struct {
		Message string `json:"message"`
		Type    string `json:"type"`
		Error   *struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(raw, &obj) == nil {
		switch {
		case obj.Message != "":
			return obj.Message
		case obj.Error != nil && obj.Error.Message != "":
			return obj.Error.Message
		case obj.Type != "":
			return obj.Type
		}
	}
	if len(raw) == 0 || string(raw) == "null" {
		return "API error"
	}

	return string(raw)
}

// toolSummary is "<tool> <its main argument>" (a path inside cwd relative
// to it).
func toolSummary(name string, input json.RawMessage, cwd string) string {
	var in map[string]any
	json.Unmarshal(input, &in)
	arg := ""
	for _, k := range []string{"file_path", "command", "path", "pattern", "url", "description"} {
		if v, ok := in[k].(string); ok && v != "" {
			arg = v
			if k == "file_path" && cwd != "" && filepath.IsAbs(v) {
				if r, err := filepath.Rel(cwd, v); err == nil && !strings.HasPrefix(r, "..") {
					arg = r
				}
			}
			break
		}
	}

	if name == "" {
		name = "a tool"
	}

	return summaryText(strings.TrimSpace(name + " " + arg))
}

// summaryRunes bounds a summary (as the stream's do).
const summaryRunes = 120

// summaryText is s on one line, cut to summaryRunes.
func summaryText(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) <= summaryRunes {
		return s
	}
	r := []rune(s)
	return string(r[:summaryRunes-1]) + "…"
}

// RecordHookEvent is the hidden `hook-event` subcommand: it reads one hook
// JSON object from stdin and appends its meaning to out as one line, in
// one O_APPEND write (atomic: a line is far below PIPE_BUF, summaries being
// bounded, so concurrent hooks never interleave). It never takes
// a lock or runs git; errors are returned for the caller to ignore (the
// agent must never fail because of us).
func RecordHookEvent(stdin io.Reader, out string) error {
	data, err := io.ReadAll(io.LimitReader(stdin, 1<<20))
	if err != nil {
		return err
	}

	hs, ok := hookStateOf(data, time.Now())
	if !ok || out == "" {
		return nil
	}
	if !filepath.IsAbs(out) {
		return fmt.Errorf("hook-event: --out %q is not absolute", out)
	}

	b, err := json.Marshal(hs)
	if err != nil {
		return err
	}

	// (on a fresh line when the last one was cut short)
	return store.AppendLine(out, b)
}

// readHookEvents reads the complete lines of logs/hook.jsonl from offset
// off and returns their events (bad lines skipped) and the offset after
// the last complete line.
func readHookEvents(path string, off int64) ([]HookState, int64) {
	f, err := store.ReadLog(path)
	if err != nil {
		return nil, off
	}
	defer f.Close()

	if _, err := f.Seek(off, io.SeekStart); err != nil {
		return nil, off
	}

	data, err := io.ReadAll(io.LimitReader(f, 1<<20))
	if err != nil {
		return nil, off
	}

	var out []HookState
	for {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			return out, off
		}

		var hs HookState
		if json.Unmarshal(data[:i], &hs) == nil && hs.State != "" {
			out = append(out, hs)
		}

		off += int64(i + 1)
		data = data[i+1:]
	}
}
