// Command fakeagent is the coding agent the tests run instead of claude or
// codex. It writes and commits files, prints realistic claude or codex JSONL,
// sleeps, waits for files, handles signals and exits with a chosen code.
//
// Action flags run in the order given on the command line:
//
//	-write path=content    create or replace a file (parent dirs created)
//	-append path=content   append to a file
//	-commit message        git add -A && git commit -q -m message (real git, in cwd)
//	-stdout text           print text and a newline on stdout
//	-stderr text           print text and a newline on stderr
//	-print-cwd             print the working directory
//	-print-args            print each os.Args element as `arg: %q`
//	-print-env NAME        print NAME=value (or NAME unset)
//	-echo-prompt           print the last positional argument verbatim
//	-runner-status s[:sum] write .agency/state/runner_status.json
//	-deny path            with -stream: report a write of path the runner
//	                       refused (claude: permission_denied; codex: the
//	                       router error on stderr); nothing is written
//	-wait-file path        block until path exists (gives up after 60 s, exit 3)
//	-hook EVENT[=json]     run the claude hook command that --settings gives
//	                       for EVENT, its JSON on stdin: hook_event_name,
//	                       session_id, cwd, and the fields of json (an object)
//	-osc state[:kind]      print codex's OSC 7501 state sequence
//
// In content, the two-character sequences \n and \t stand for a newline and
// a tab (txtar scripts cannot pass them otherwise).
//
// Settings (position does not matter):
//
//	-stream claude|codex   frame the run as that runner's JSONL: a session
//	                       start first, every write/append/commit as a tool call
//	                       and its result, a final message and result (or
//	                       turn.completed); a non-zero -exit makes it a failure
//	-needs-input           end the stream with a question to the user
//	-interactive           after the actions, print "> " and echo stdin lines
//	                       until EOF or a line "exit" (for tmux runs)
//	-sleep duration        sleep before exiting
//	-session-id id         the conversation's id (default a fixed one)
//	-resume id             continue conversation id (saved by an earlier run
//	                       in $TMPDIR/fakeagent-sessions): the stream keeps its
//	                       id, its final message quotes the first prompt
//	                       ("RECALL: first prompt was <<…>>; N user prompts in
//	                       history"), and its usage is the conversation's
//	                       total, as the real CLIs report it
//	-ignore-sigint         ignore SIGINT (else SIGINT exits 130)
//	-exit N                exit status (default 0)
//	--settings json|file   claude's settings (the hooks -hook runs)
//
// SIGTERM always exits 143. Positional arguments after the flags are the
// prompt.
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

func main() { os.Exit(run(os.Args, os.Stdin, os.Stdout, os.Stderr)) }

// agent holds the settings and the ordered actions of one run.
type agent struct {
	stdout, stderr io.Writer
	actions        []func() error
	stream         string
	needsInput     bool
	interactive    bool
	sleep          time.Duration
	ignoreSigint   bool
	exit           int
	sessionID      string
	resume         string
	prompt         string
	settings       string
	emit           *emitter // nil without -stream
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	a := &agent{stdout: stdout, stderr: stderr}
	fs := flag.NewFlagSet("fakeagent", flag.ContinueOnError)
	fs.SetOutput(stderr)
	act := func(name, usage string, f func(string) error) {
		fs.Func(name, usage, func(v string) error {
			a.actions = append(a.actions, func() error { return f(v) })
			return nil
		})
	}
	actBool := func(name, usage string, f func() error) {
		fs.BoolFunc(name, usage, func(string) error {
			a.actions = append(a.actions, f)
			return nil
		})
	}
	act("write", "create `path=content`", func(v string) error { return a.writeFile(v, false) })
	act("append", "append `path=content`", func(v string) error { return a.writeFile(v, true) })
	act("commit", "git add -A && git commit -m `message`", a.commit)
	act("stdout", "print `text` on stdout", func(v string) error { _, err := fmt.Fprintln(stdout, v); return err })
	act("stderr", "print `text` on stderr", func(v string) error { _, err := fmt.Fprintln(stderr, v); return err })
	act("print-env", "print environment variable `NAME`", func(v string) error {
		if val, ok := os.LookupEnv(v); ok {
			fmt.Fprintf(stdout, "%s=%s\n", v, val)
		} else {
			fmt.Fprintf(stdout, "%s unset\n", v)
		}
		return nil
	})
	act("runner-status", "write runner_status.json `status[:summary]`", writeRunnerStatus)
	act("deny", "report a refused write of `path` (with -stream)", func(v string) error {
		if a.emit != nil {
			a.emit.deny(v, stderr)
		}
		return nil
	})
	act("wait-file", "wait until `path` exists", func(v string) error { return waitFile(v, 60*time.Second) })
	actBool("print-cwd", "print the working directory", func() error {
		wd, err := os.Getwd()
		fmt.Fprintln(stdout, wd)
		return err
	})
	actBool("print-args", "print os.Args", func() error {
		for _, s := range args {
			fmt.Fprintf(stdout, "arg: %q\n", s)
		}
		return nil
	})
	actBool("echo-prompt", "print the prompt", func() error { _, err := fmt.Fprintln(stdout, a.prompt); return err })
	act("hook", "run the claude hook `EVENT[=json]`", a.runHook)
	act("osc", "print OSC 7501 `state[:kind]`", func(v string) error {
		state, kind, _ := strings.Cut(v, ":")
		seq := "\x1b]7501;state=" + state + ":app=codex"
		if kind != "" {
			seq += ":kind=" + kind
		}
		_, err := fmt.Fprint(stdout, seq+"\x1b\\")
		return err
	})
	fs.StringVar(&a.settings, "settings", "", "claude settings `json` (hooks)")
	fs.StringVar(&a.stream, "stream", "", "print a `claude|codex` JSONL stream")
	fs.BoolVar(&a.needsInput, "needs-input", false, "end the stream waiting for the user")
	fs.BoolVar(&a.interactive, "interactive", false, "echo stdin lines after a \"> \" prompt")
	fs.DurationVar(&a.sleep, "sleep", 0, "sleep before exiting")
	fs.BoolVar(&a.ignoreSigint, "ignore-sigint", false, "ignore SIGINT")
	fs.IntVar(&a.exit, "exit", 0, "exit status")
	fs.StringVar(&a.sessionID, "session-id", fakeSession, "the conversation's `id`")
	fs.StringVar(&a.resume, "resume", "", "continue conversation `id`")
	if err := fs.Parse(args[1:]); err != nil {
		return 2
	}
	if rest := fs.Args(); len(rest) > 0 {
		a.prompt = rest[len(rest)-1]
	}

	switch a.stream {
	case "":
	case "claude", "codex":
		id := a.sessionID
		if a.resume != "" {
			id = a.resume
		}

		sess, err := openSession(id, a.prompt, a.resume != "")
		if err != nil {
			fmt.Fprintf(stderr, "fakeagent: %v\n", err)
			return 1
		}

		a.emit = newEmitter(a.stream, stdout, sess, a.resume != "")
	default:
		fmt.Fprintf(stderr, "fakeagent: -stream must be claude or codex, not %q\n", a.stream)
		return 2
	}

	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	go func() {
		for s := range sigs {
			if s == syscall.SIGTERM {
				os.Exit(143)
			}
			if !a.ignoreSigint {
				os.Exit(130)
			}
		}
	}()

	if a.emit != nil {
		a.emit.start()
	}

	for _, f := range a.actions {
		if err := f(); err != nil {
			fmt.Fprintf(stderr, "fakeagent: %v\n", err)
			var w waitErr
			if errors.As(err, &w) {
				return 3
			}
			return 1
		}
	}

	if a.emit != nil {
		a.emit.finish(a.exit, a.needsInput)
		if err := a.emit.session.save(); err != nil {
			fmt.Fprintf(stderr, "fakeagent: %v\n", err)
		}
	}

	if a.interactive {
		interact(stdin, stdout)
	}
	if a.sleep > 0 {
		time.Sleep(a.sleep) // signals still end the process via the handler
	}

	return a.exit
}

// unescape turns the two-character sequences \n, \t and \\ into characters.
func unescape(s string) string {
	return strings.NewReplacer(`\\`, `\`, `\n`, "\n", `\t`, "\t").Replace(s)
}

func (a *agent) writeFile(v string, appendTo bool) error {
	path, content, ok := strings.Cut(v, "=")
	if !ok || path == "" {
		return fmt.Errorf("want path=content, got %q", v)
	}

	content = unescape(content)

	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}

	flags := os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	if appendTo {
		flags = os.O_WRONLY | os.O_CREATE | os.O_APPEND
	}

	f, err := os.OpenFile(path, flags, 0o644)
	if err != nil {
		return err
	}

	if _, err := f.WriteString(content); err != nil {
		f.Close()
		return err
	}

	if err := f.Close(); err != nil {
		return err
	}
	if a.emit != nil {
		a.emit.write(path, content, appendTo)
	}

	return nil
}

func (a *agent) commit(msg string) error {
	for _, args := range [][]string{{"add", "-A"}, {"commit", "-q", "-m", msg}} {
		cmd := exec.Command("git", args...)
		cmd.Stdout, cmd.Stderr = a.stderr, a.stderr // keep stdout a clean stream
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("git %s: %w", strings.Join(args, " "), err)
		}
	}
	if a.emit != nil {
		a.emit.command("git add -A && git commit -m "+quote(msg), "")
	}
	return nil
}

func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

func writeRunnerStatus(v string) error {
	status, summary, _ := strings.Cut(v, ":")
	b, err := json.Marshal(map[string]string{"status": status, "summary": summary})
	if err != nil {
		return err
	}

	dir := filepath.Join(".agency", "state")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}

	// Write then rename so a reader never sees half a file.
	tmp := filepath.Join(dir, "runner_status.json.tmp")
	if err := os.WriteFile(tmp, append(b, '\n'), 0o644); err != nil {
		return err
	}

	return os.Rename(tmp, filepath.Join(dir, "runner_status.json"))
}

// hookSession is the session id the fake agent's hooks report.
const hookSession = "00000000-0000-4000-8000-00000000ca11"

// runHook runs the command hooks --settings configures for an event, the
// way claude does: through the shell, with the event's JSON on stdin.
func (a *agent) runHook(v string) error {
	event, extra, _ := strings.Cut(v, "=")
	in := map[string]any{}
	if extra != "" {
		if err := json.Unmarshal([]byte(extra), &in); err != nil {
			return fmt.Errorf("-hook %s: %v", event, err)
		}
	}

	wd, _ := os.Getwd()
	in["hook_event_name"], in["session_id"], in["cwd"] = event, hookSession, wd
	body, _ := json.Marshal(in)
	var settings struct {
		Hooks map[string][]struct {
			Hooks []struct{ Type, Command string }
		}
	}
	if a.settings != "" {
		raw := []byte(a.settings)
		if !strings.HasPrefix(strings.TrimSpace(a.settings), "{") { // a file, as claude takes
			var err error
			if raw, err = os.ReadFile(a.settings); err != nil {
				return fmt.Errorf("--settings: %v", err)
			}
		}

		if err := json.Unmarshal(raw, &settings); err != nil {
			return fmt.Errorf("--settings: %v", err)
		}
	}

	for _, g := range settings.Hooks[event] {
		for _, h := range g.Hooks {
			if h.Type != "command" {
				continue
			}

			cmd := exec.Command("/bin/sh", "-c", h.Command)
			cmd.Stdin = strings.NewReader(string(body))
			cmd.Stdout, cmd.Stderr = a.stderr, a.stderr
			if err := cmd.Run(); err != nil {
				return fmt.Errorf("hook %s: %v", event, err)
			}
		}
	}

	return nil
}

type waitErr struct{ path string }

func (w waitErr) Error() string { return "gave up waiting for " + w.path }

// waitFile polls for path until it exists or the deadline passes.
func waitFile(path string, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		if _, err := os.Stat(path); err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return waitErr{path}
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// interact is a minimal REPL for headed (tmux) runs.
func interact(stdin io.Reader, stdout io.Writer) {
	sc := bufio.NewScanner(stdin)
	for {
		fmt.Fprint(stdout, "> ")

		if !sc.Scan() {
			fmt.Fprintln(stdout)
			return
		}

		line := sc.Text()
		if strings.TrimSpace(line) == "exit" {
			return
		}

		fmt.Fprintf(stdout, "echo: %s\n", line)
	}
}
