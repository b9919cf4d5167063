// Command demoagent is the bundled agent of `make demo`: it edits files the
// way a coding agent would and prints Claude Code's stream-json (one JSON
// object a line), so the demo needs no API key.
//
// Its prompt (the last argument) is a small script, one step a line:
//
//	write PATH: TEXT     create or replace PATH with TEXT and a newline
//	append PATH: TEXT    add a line to PATH
//	replace PATH: OLD => NEW   replace the first OLD with NEW in PATH
//	commit MESSAGE       git add -A and commit
//	say TEXT             just talk
//
// $DEMO_DELAY (a Go duration, default 300ms) is the pause between steps.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

func emit(v map[string]any) {
	b, _ := json.Marshal(v)
	fmt.Println(string(b))
}

func text(s string) map[string]any {
	return map[string]any{"type": "assistant", "message": map[string]any{"role": "assistant",
		"content": []any{map[string]any{"type": "text", "text": s}}}}
}

func toolUse(id, name string, input map[string]any) map[string]any {
	return map[string]any{"type": "assistant", "message": map[string]any{"role": "assistant",
		"content": []any{map[string]any{"type": "tool_use", "id": id, "name": name, "input": input}}}}
}

func toolResult(id, content string, isErr bool) map[string]any {
	return map[string]any{"type": "user", "message": map[string]any{"role": "user",
		"content": []any{map[string]any{"type": "tool_result", "tool_use_id": id, "content": content, "is_error": isErr}}}}
}

func main() {
	prompt := ""
	if len(os.Args) > 1 {
		prompt = os.Args[len(os.Args)-1]
	}

	delay := 300 * time.Millisecond
	if d, err := time.ParseDuration(os.Getenv("DEMO_DELAY")); err == nil {
		delay = d
	}

	cwd, _ := os.Getwd()
	session := fmt.Sprintf("demo-%d", os.Getpid())
	start := time.Now()
	emit(map[string]any{"type": "system", "subtype": "init", "session_id": session, "cwd": cwd,
		"model": "demo-agent", "tools": []string{"Read", "Write", "Edit", "Bash"}})
	turns, failed := 0, false
	for i, line := range strings.Split(prompt, "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}

		time.Sleep(delay)
		turns++
		verb, rest, _ := strings.Cut(line, " ")
		id := fmt.Sprintf("toolu_%02d", i)
		var err error
		switch verb {
		case "say":
			emit(text(rest))
			continue
		case "write", "append", "replace":
			path, body, _ := strings.Cut(rest, ": ")
			tool := map[string]string{"write": "Write", "append": "Edit", "replace": "Edit"}[verb]
			emit(text(fmt.Sprintf("I'll %s %s.", verb, path)))
			emit(toolUse(id, tool, map[string]any{"file_path": filepath.Join(cwd, path)}))
			err = edit(verb, path, body)
		case "commit":
			emit(toolUse(id, "Bash", map[string]any{"command": "git add -A && git commit -m " + fmt.Sprintf("%q", rest)}))
			err = run("git", "add", "-A")
			if err == nil {
				err = run("git", "commit", "-q", "-m", rest)
			}
		default:
			err = fmt.Errorf("unknown step %q", verb)
		}

		if err != nil {
			failed = true
			emit(toolResult(id, err.Error(), true))
			break
		}

		emit(toolResult(id, "ok", false))
	}

	sub := "success"
	if failed {
		sub = "error_during_execution"
	}

	emit(text("Done."))
	emit(map[string]any{"type": "result", "subtype": sub, "is_error": failed, "session_id": session,
		"num_turns": turns, "duration_ms": time.Since(start).Milliseconds(), "total_cost_usd": 0,
		"result": "finished the demo task", "usage": map[string]any{"input_tokens": 100 * turns, "output_tokens": 40 * turns}})

	if failed {
		os.Exit(1)
	}
}

func edit(verb, path, body string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}

	switch verb {
	case "write":
		return os.WriteFile(path, []byte(body+"\n"), 0o644)
	case "append":
		f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			return err
		}
		defer f.Close()
		_, err = f.WriteString(body + "\n")
		return err
	default:
		old, repl, ok := strings.Cut(body, " => ")
		if !ok {
			return fmt.Errorf("replace needs OLD => NEW")
		}

		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if !strings.Contains(string(b), old) {
			return fmt.Errorf("%s does not contain %q", path, old)
		}

		return os.WriteFile(path, []byte(strings.Replace(string(b), old, repl, 1)), 0o644)
	}
}

func run(name string, args ...string) error {
	cmd := exec.Command(name, args...)
	cmd.Stderr = os.Stderr
	return cmd.Run()
}
