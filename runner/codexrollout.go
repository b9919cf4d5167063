package runner

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/git-agency/git-agency/runner/stream"
	"github.com/git-agency/git-agency/store"
)

// A headed codex shows nothing of a tool call its own sandbox or approval
// policy refused (headless codex prints it on stderr), and its turn still
// ends "Done". Its session log (the "rollout", one JSONL file per thread
// under $CODEX_HOME/sessions/YYYY/MM/DD/) keeps the refusal as the tool's
// output: that is where the supervisor reads it.

// codexHome is the directory codex keeps its sessions in, as the agent's
// environment names it: CODEX_HOME, else ~/.codex ("" if neither is known).
func codexHome(env []string) string {
	home := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "CODEX_HOME="); ok && v != "" {
			return v
		}
		if v, ok := strings.CutPrefix(kv, "HOME="); ok {
			home = v
		}
	}

	if home == "" {
		return ""
	}

	return filepath.Join(home, ".codex")
}

// rolloutMaxLine bounds one line of a session log (its first holds the
// whole system prompt).
const rolloutMaxLine = 16 << 20

// rolloutLine is what is read of one line of a codex session log.
type rolloutLine struct {
	Timestamp time.Time `json:"timestamp"`
	Type      string    `json:"type"`
	Payload   struct {
		Type   string          `json:"type"`
		Cwd    string          `json:"cwd"`
		Output json.RawMessage `json:"output"`
	} `json:"payload"`
}

// codexRolloutDenials counts the tool calls codex's own sandbox or
// approval policy refused since `since`, in the session logs of the codex
// that ran in dir (its first line, session_meta, names the directory), and
// gives the latest one's summary ("denied: patch rejected: …", as headless
// codex's stderr reads). Logs it cannot find or read count nothing.
func codexRolloutDenials(home, dir string, since time.Time) (n int, last string) {
	if home == "" || dir == "" {
		return 0, ""
	}
	for _, path := range rolloutFiles(home, since) {
		k, l := rolloutDenials(path, dir, since)
		if k > 0 {
			n, last = n+k, l
		}
	}
	return n, last
}

// rolloutFiles are the session logs written since `since`: those in the
// day directories from the day before it to the day after now (codex names
// them by its local date).
func rolloutFiles(home string, since time.Time) []string {
	var out []string
	seen := map[string]bool{}
	end := time.Now().Add(24 * time.Hour)
	for d := since.Add(-24 * time.Hour); !d.After(end); d = d.Add(24 * time.Hour) {
		day := filepath.Join(home, "sessions", d.Local().Format("2006/01/02"))
		if seen[day] {
			continue
		}

		seen[day] = true
		paths, _ := filepath.Glob(filepath.Join(day, "rollout-*.jsonl"))
		for _, p := range paths {
			if fi, err := os.Stat(p); err == nil && !fi.ModTime().Before(since) {
				out = append(out, p)
			}
		}
	}

	return out
}

// rolloutDenials reads one session log: nothing unless it was codex's in
// dir; else the refusals among its tool outputs since `since`.
func rolloutDenials(path, dir string, since time.Time) (n int, last string) {
	f, err := store.ReadLog(path)
	if err != nil {
		return 0, ""
	}
	defer f.Close()
	r := bufio.NewReader(io.LimitReader(f, 1<<30))
	first := true
	for {
		line, err := readRolloutLine(r)
		if len(line) > 0 {
			if first {
				var l rolloutLine
				if json.Unmarshal(line, &l) != nil || l.Type != "session_meta" ||
					filepath.Clean(l.Payload.Cwd) != filepath.Clean(dir) {
					return 0, ""
				}
				first = false
			} else if ev, ok := rolloutRefusal(line, since); ok {
				n, last = n+1, ev.Summary
			}
		}
		if err != nil {
			return n, last
		}
	}
}

// readRolloutLine is the next line (without its newline); a line longer
// than rolloutMaxLine is skipped.
func readRolloutLine(r *bufio.Reader) ([]byte, error) {
	var line []byte
	long := false
	for {
		chunk, err := r.ReadSlice('\n')
		if long || len(line)+len(chunk) > rolloutMaxLine {
			long, line = true, nil
		} else {
			line = append(line, chunk...)
		}

		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}

		return bytes.TrimRight(line, "\n"), err
	}
}

// rolloutRefusal is the denial a tool output line since `since` holds, if
// it is one.
func rolloutRefusal(line []byte, since time.Time) (stream.Event, bool) {
	if !bytes.Contains(line, []byte(`_call_output"`)) {
		return stream.Event{}, false
	}

	var l rolloutLine
	if json.Unmarshal(line, &l) != nil || l.Type != "response_item" || l.Timestamp.Before(since) {
		return stream.Event{}, false
	}

	switch l.Payload.Type {
	case "function_call_output", "custom_tool_call_output":
	default:
		return stream.Event{}, false
	}

	var out string
	if json.Unmarshal(l.Payload.Output, &out) != nil {
		var o struct {
			Content string `json:"content"`
		}
		if json.Unmarshal(l.Payload.Output, &o) != nil {
			return stream.Event{}, false
		}
		out = o.Content
	}

	return stream.CodexRefusal(out)
}
