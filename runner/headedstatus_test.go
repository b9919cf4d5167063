package runner

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/git-agency/git-agency/runner/stream"
	"github.com/git-agency/git-agency/store"
)

// The captures are the real panes of codex 0.169 (hx2: a permission prompt,
// approved, then /quit) and claude 2.1.330 (h-claude3: a permission prompt,
// a second prompt, an API error).

func oscStates(t *testing.T, data []byte, chunk int) []string {
	t.Helper()
	var sc OSCScanner
	var got []string
	for i := 0; i < len(data); i += chunk {
		end := i + chunk
		if end > len(data) {
			end = len(data)
		}
		for _, st := range sc.feed(data[i:end]) {
			s := st.State
			if st.Kind != "" {
				s += "/" + st.Kind
			}
			got = append(got, s)
		}
	}
	return got
}

func TestOSCScannerCodexCapture(t *testing.T) {
	data, err := os.ReadFile("testdata/hx2.pane.log")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"idle", "working", "blocked/permission", "working", "done", "idle", "clear"}
	// Whole, and split at every possible place (chunks of 1, 3, 7 bytes).
	for _, chunk := range []int{len(data), 1, 3, 7, 4096} {
		if got := oscStates(t, data, chunk); !reflect.DeepEqual(got, want) {
			t.Errorf("chunk %d: got %v, want %v", chunk, got, want)
		}
	}
}

func TestOSCScannerClaudeCaptureHasNoState(t *testing.T) {
	data, err := os.ReadFile("testdata/h-claude3.pane.log")
	if err != nil {
		t.Fatal(err)
	}
	// claude only queries OSC 7501 ("ESC ] 7501 ; ? BEL"): no state.
	if got := oscStates(t, data, 5); len(got) != 0 {
		t.Errorf("got %v", got)
	}
}

func TestOSCScannerBELAndGarbage(t *testing.T) {
	in := "x\x1b]7501;state=blocked:app=codex:kind=permission\x07y\x1b]0;title\x07\x1b]7501;junk\x07" +
		"\x1b]7501;state=done:app=codex\x1b\\"
	got := oscStates(t, []byte(in), 2)
	want := []string{"blocked/permission", "done"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

func TestResumeIDAndTokenUsageFromCodexScreen(t *testing.T) {
	scr, err := os.ReadFile("testdata/hx2.screen.txt")
	if err != nil {
		t.Fatal(err)
	}
	if id := resumeID(string(scr)); id != "01a208fd-70d3-7f02-823e-19d6e6ad7edc" {
		t.Errorf("resume id %q", id)
	}
	u := tokenUsage(string(scr))
	if u == nil || u.InputTokens != 2000 || u.OutputTokens != 100 || u.CachedInputTokens != 600 || u.ReasoningTokens != 40 {
		t.Errorf("usage %+v", u)
	}
	if id := resumeID("Resume this session with:\nclaude --resume 9a4eac71-92d5-460c-abc3-0c6ecb9380ff\n"); id != "9a4eac71-92d5-460c-abc3-0c6ecb9380ff" {
		t.Errorf("claude resume id %q", id)
	}
	// codex 0.169 when its background server keeps the thread
	u = tokenUsage("To reconnect, run:\n  codex resume 01a20980-5639-7940-8bae-70db2faf944d\nToken usage so far: total=30 input=20 output=10\n")
	if u == nil || u.InputTokens != 20 || u.OutputTokens != 10 {
		t.Errorf("usage so far %+v", u)
	}
	if tokenUsage("nothing here") != nil || resumeID("nothing") != "" {
		t.Error("found usage or an id in nothing")
	}
}

// Screens as capture-pane shows them (text of the real captures).
const (
	codexModelNotice = `
  Meet GPT-6 Sol

  Our latest Sol is more intelligent and more efficient so your usage limits
  go further. This model is a great daily driver for complex tasks, especially
  coding.

› 1. Try new model
  2. Use existing model

  enter/esc confirm · ^c quit
`
	codexPermission = `
› @@ESC@@ make esc.txt

• Running touch esc.txt


  Would you like to run the following command?

  Environment: local

  Reason: May I create esc.txt?

  $ touch esc.txt


› 1. Yes, proceed (y)
  2. Yes, and don't ask again for commands that start with ` + "`touch esc.txt`" + ` (p)
  3. No, and tell Codex what to do differently (esc)

  Press enter to confirm or esc to cancel
`
	codexTrust = `
> You are in /tmp/repo

  Do you trust the contents of this directory? Working with untrusted contents
  comes with higher risk of prompt injection.

› 1. Yes, continue
  2. No, quit

  Press enter to continue
`
	// codex 0.169 in a fresh CODEX_HOME, in a sandbox of a repository.
	codexFolderAccess = `
  Folder access

  /tmp/cx/data/repos/32ba3fe6d39c6fdb/sandboxes/20261123174104-a431/tree

  Note: You’re in a subdirectory of a Git project. Trusting will apply to the
  repository root:
  /tmp/cx/repo

  Trust this folder? Codex can read, edit, and run files here, subject to your
  permission settings. Folder settings can run code automatically, even
  without a model request. Continue only if you trust these files. Your trust
  decision will be saved.

› 1. Trust and continue
  2. Back to Agent Command Center

  enter continue · esc back
`
	claudeTrust = `
 Accessing workspace:

 /tmp/w/sandboxes/x/tree

 Quick safety check: Is this a project you created or one you trust? (Like your
 own code, a well-known open source project, or work from your team). If not,
 take a moment to review what's in this folder first.

 ❯ 1. Yes, I trust this folder
   2. No, exit

 Enter to confirm · Esc to cancel
`
	claudeIdle = `
 ▐▛███▜▌   Claude Code v2.1.330
❯ Create hello.txt
● Done: wrote the file.
──────────────
❯
──────────────
  ? for shortcuts
`
)

func TestScreenDialog(t *testing.T) {
	for _, tc := range []struct {
		name, format, screen string
		want                 string // "" = no dialog
	}{
		{"claude trust", stream.FormatClaude, claudeTrust, "trust this folder"},
		{"claude at its prompt", stream.FormatClaude, claudeIdle, ""},
		{"codex model notice", stream.FormatCodex, codexModelNotice, "codex asks: Meet GPT-6 Sol"},
		{"codex trust", stream.FormatCodex, codexTrust, "codex asks whether to trust this folder"},
		{"codex folder access (0.169)", stream.FormatCodex, codexFolderAccess, "codex asks whether to trust this folder"},
		{"codex at its prompt", stream.FormatCodex, "  >_ OpenAI Codex (v0.169.0)\n\n› Ask Codex to do anything\n\n  ? for shortcuts\n", ""},
		{"codex trust screen for claude", stream.FormatClaude, codexModelNotice, ""},
		{"no format", "", claudeTrust, ""},
	} {
		d, ok := screenDialog(tc.format, tc.screen)
		if tc.want == "" {
			if ok {
				t.Errorf("%s: unexpected dialog %q", tc.name, d.Summary)
			}
			continue
		}
		if !ok || !strings.Contains(d.Summary, tc.want) {
			t.Errorf("%s: got %q (%v), want %q", tc.name, d.Summary, ok, tc.want)
		}
	}
	// The real screen of codex 0.169's background-server dialog: its
	// selection is on "3. Cancel" and it has no confirm hint.
	bg, err := os.ReadFile("testdata/hx-bgserver.screen.txt")
	if err != nil {
		t.Fatal(err)
	}
	if d, ok := screenDialog(stream.FormatCodex, string(bg)); !ok || d.Summary != "codex asks: Background server has incompatible feature settings" {
		t.Errorf("background server dialog: got %q (%v)", d.Summary, ok)
	}
	if got := codexPermissionSummary(codexPermission); got != "permission: touch esc.txt" {
		t.Errorf("codex permission summary %q", got)
	}
}

func TestCodexLastMessage(t *testing.T) {
	scr := `  >_ OpenAI Codex (v0.169.0)

› Create hello.txt

• Added hello.txt (+1 -0)
    1 +hello from mock
    + Show details

• Done: wrote the file.

  Worked for <1s • 17:42

› Ask Codex to do anything
`
	if got := codexLastMessage(scr); got != "Done: wrote the file." {
		t.Errorf("got %q", got)
	}
	// A resumed thread: the earlier turn is on the screen above the new one.
	resumed := `  >_ OpenAI Codex (v0.169.0)

› Create hello.txt

• Done: wrote the file.

  Worked for <1s • 17:42

› Now what did I ask first?

• You asked: Create hello.txt

  Worked for <1s • 17:43

› Ask Codex to do anything
`
	if got := codexLastMessage(resumed); got != "You asked: Create hello.txt" {
		t.Errorf("resumed: got %q", got)
	}
	if got := codexLastMessage("› Ask Codex to do anything\n"); got != "" {
		t.Errorf("got %q", got)
	}
}

func TestHookStateOf(t *testing.T) {
	now := time.Date(2026, 11, 23, 15, 0, 0, 0, time.UTC)
	sid := `"session_id":"9a4eac71-92d5-460c-abc3-0c6ecb9380ff","cwd":"/tmp/x","transcript_path":"/tmp/t.jsonl"`
	for _, tc := range []struct {
		in              string
		state, summary  string
		done, turnError bool
		ignored         bool
	}{
		{`{"hook_event_name":"SessionStart","source":"startup",` + sid + `}`, AgentActive, "session started", false, false, false},
		{`{"hook_event_name":"UserPromptSubmit","prompt":"Create\nhello.txt",` + sid + `}`, AgentActive, "prompt: Create hello.txt", false, false, false},
		{`{"hook_event_name":"PreToolUse","tool_name":"Write","tool_input":{"file_path":"/tmp/x/hello.txt","content":"hi"},` + sid + `}`, AgentActive, "Write hello.txt", false, false, false},
		{`{"hook_event_name":"PermissionRequest","tool_name":"Write","tool_input":{"file_path":"/tmp/x/sub/hello.txt"},` + sid + `}`, AgentNeedsInput, "permission: Write sub/hello.txt", false, false, false},
		{`{"hook_event_name":"PermissionRequest","tool_name":"Write","tool_input":{"file_path":"/etc/passwd"},` + sid + `}`, AgentNeedsInput, "permission: Write /etc/passwd", false, false, false},
		{`{"hook_event_name":"PermissionRequest","tool_name":"Bash","tool_input":{"command":"rm -rf build"},` + sid + `}`, AgentNeedsInput, "permission: Bash rm -rf build", false, false, false},
		{`{"hook_event_name":"Notification","notification_type":"permission_prompt","message":"Claude needs your permission to use Write",` + sid + `}`, AgentNeedsInput, "Claude needs your permission to use Write", false, false, false},
		{`{"hook_event_name":"Notification","notification_type":"idle_prompt","message":"Claude is waiting for your input",` + sid + `}`, AgentNeedsInput, "Claude is waiting for your input", false, false, false},
		{`{"hook_event_name":"Notification","notification_type":"auth_success","message":"ok",` + sid + `}`, "", "", false, false, true},
		{`{"hook_event_name":"PostToolUse","tool_name":"Write","tool_input":{"file_path":"hello.txt"},"tool_response":{},` + sid + `}`, AgentActive, "Write hello.txt", false, false, false},
		{`{"hook_event_name":"Stop","stop_hook_active":false,"last_assistant_message":"Done: wrote the file.",` + sid + `}`, AgentNeedsInput, "Done: wrote the file.", true, false, false},
		{`{"hook_event_name":"StopFailure","error":"API Error: Connection refused","last_assistant_message":"",` + sid + `}`, AgentNeedsInput, "error: API Error: Connection refused", true, true, false},
		{`{"hook_event_name":"StopFailure","error":{"type":"api_error","message":"overloaded"},` + sid + `}`, AgentNeedsInput, "error: overloaded", true, true, false},
		{`{"hook_event_name":"SessionEnd","reason":"prompt_input_exit",` + sid + `}`, AgentEnded, "session ended prompt_input_exit", false, false, false},
		{`{"hook_event_name":"Interrupt",` + sid + `}`, "", "", false, false, true},
		{`not json`, "", "", false, false, true},
	} {
		hs, ok := hookStateOf([]byte(tc.in), now)
		if ok == tc.ignored {
			t.Errorf("%s: ok = %v", tc.in, ok)
			continue
		}
		if !ok {
			continue
		}
		if hs.State != tc.state || hs.Summary != tc.summary || hs.TurnDone != tc.done || hs.TurnError != tc.turnError {
			t.Errorf("%s:\n got %+v", tc.in, hs)
		}
		if hs.SessionID != "9a4eac71-92d5-460c-abc3-0c6ecb9380ff" || !hs.Time.Equal(now) {
			t.Errorf("%s: session %q time %v", tc.in, hs.SessionID, hs.Time)
		}
	}
}

func TestRecordHookEventAppendsALine(t *testing.T) {
	out := filepath.Join(t.TempDir(), hookFile)
	in := `{"hook_event_name":"PermissionRequest","tool_name":"Write","tool_input":{"file_path":"a.txt"},"session_id":"s1"}`
	if err := RecordHookEvent(strings.NewReader(in), out); err != nil {
		t.Fatal(err)
	}
	evs, off := readHookEvents(out, 0)
	if len(evs) != 1 || evs[0].State != AgentNeedsInput || evs[0].Summary != "permission: Write a.txt" || evs[0].SessionID != "s1" {
		t.Fatalf("got %+v", evs)
	}
	// An event that means nothing adds nothing; bad input neither.
	RecordHookEvent(strings.NewReader(`{"hook_event_name":"Interrupt"}`), out)
	RecordHookEvent(strings.NewReader(`{`), out)
	if evs, _ := readHookEvents(out, off); len(evs) != 0 {
		t.Fatalf("added: %+v", evs)
	}
	// A partial last line waits for its newline.
	f, _ := os.OpenFile(out, os.O_WRONLY|os.O_APPEND, 0o600)
	f.WriteString(`{"event":"Stop","state":"needs_input"`)
	f.Close()
	if evs, off2 := readHookEvents(out, off); len(evs) != 0 || off2 != off {
		t.Fatalf("a partial line was read: %+v at %d", evs, off2)
	}
	if err := RecordHookEvent(strings.NewReader(in), "relative.json"); err == nil {
		t.Error("a relative --out was accepted")
	}
}

// A hook event after a line cut short (a hook killed mid-write, a full
// disk) starts on a line of its own: it is read, not lost with the cut one.
func TestRecordHookEventAfterACutLine(t *testing.T) {
	out := filepath.Join(t.TempDir(), hookFile)
	if err := os.WriteFile(out, []byte(`{"event":"Stop","sta`), 0o600); err != nil {
		t.Fatal(err)
	}
	in := `{"hook_event_name":"PermissionRequest","tool_name":"Write","tool_input":{"file_path":"a.txt"},"session_id":"s1"}`
	if err := RecordHookEvent(strings.NewReader(in), out); err != nil {
		t.Fatal(err)
	}
	evs, _ := readHookEvents(out, 0)
	if len(evs) != 1 || evs[0].SessionID != "s1" {
		t.Fatalf("the event after the cut line: got %+v", evs)
	}
}

func TestWriteClaudeSettings(t *testing.T) {
	path := filepath.Join(t.TempDir(), ClaudeSettingsFile)
	argv, err := WriteClaudeSettings([]string{"claude", "--permission-mode", "default", "--", "hi"}, path, "/opt/my bin/git-agency", "20261123-ab12", "/data/logs/hook.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"claude", "--settings", path, "--permission-mode", "default", "--", "hi"}
	if !reflect.DeepEqual(argv, want) {
		t.Fatalf("argv %q", argv)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", fi.Mode())
	}
	var settings struct {
		Hooks map[string][]struct {
			Hooks []struct{ Type, Command string }
		}
	}
	if err := json.Unmarshal(b, &settings); err != nil {
		t.Fatal(err)
	}
	for _, ev := range claudeHookEvents {
		g := settings.Hooks[ev]
		if len(g) != 1 || len(g[0].Hooks) != 1 || g[0].Hooks[0].Type != "command" {
			t.Fatalf("%s: %+v", ev, g)
		}
		want := `'/opt/my bin/git-agency' hook-event --invocation 20261123-ab12 --out /data/logs/hook.jsonl`
		if g[0].Hooks[0].Command != want {
			t.Errorf("%s: command %q", ev, g[0].Hooks[0].Command)
		}
	}
}

// A codex run replayed through the watcher: the states it shows and the
// final values.
func TestHeadedWatchCodexReplay(t *testing.T) {
	w := &headedWatch{hasPrompt: true}
	var seen []string
	var sc OSCScanner
	data, _ := os.ReadFile("testdata/hx2.pane.log")
	for _, st := range sc.feed(data) {
		w.applyOSC(st)
		s, _ := w.current()
		seen = append(seen, s)
	}
	want := []string{AgentActive, AgentActive, AgentNeedsInput, AgentActive, AgentNeedsInput, AgentNeedsInput, AgentEnded}
	if !reflect.DeepEqual(seen, want) {
		t.Errorf("got %v, want %v", seen, want)
	}
	if w.turns != 1 || !w.turnDone {
		t.Errorf("turns %d done %v", w.turns, w.turnDone)
	}
	// Without a prompt the first idle is a wait for the user.
	w2 := &headedWatch{}
	w2.applyOSC(OSCState{State: "idle"})
	if s, _ := w2.current(); s != AgentNeedsInput {
		t.Errorf("idle without a prompt: %q", s)
	}
}

// The newer of a hook and an OSC report wins; a screen dialog wins over
// both.
func TestHeadedWatchCombines(t *testing.T) {
	w := &headedWatch{}
	if s, _ := w.current(); s != "" {
		t.Fatalf("nothing reported: %q", s)
	}
	w.dialog = "claude asks whether to trust this folder"
	if s, sum := w.current(); s != AgentNeedsInput || sum != w.dialog {
		t.Fatalf("dialog: %q %q", s, sum)
	}
	w.dialog = ""
	w.hook, w.hookSeen = &HookState{State: AgentNeedsInput, Summary: "permission: Write a"}, time.Now()
	if s, _ := w.current(); s != AgentNeedsInput {
		t.Fatalf("hook: %q", s)
	}
	w.oscState, w.oscSeen = AgentActive, w.hookSeen.Add(time.Second)
	if s, _ := w.current(); s != AgentActive {
		t.Fatalf("newer osc: %q", s)
	}
}

// Two hook events written between two polls are both seen: the turn the
// Stop ended is counted, and a needs-input entry followed at once by work
// is published and noted once. An older event appended after a newer one
// (two hooks at once) does not turn the state back.
func TestHeadedWatchSeesEveryEventBetweenPolls(t *testing.T) {
	dir := t.TempDir()
	st, rec := supervisedRecord(t, dir, &store.InvocationRecord{InvocationID: "20260101000000-600c",
		Runner: "claude", Mode: store.ModeHeaded, Status: store.StatusRunning, SandboxPath: dir})
	inv := rec.InvocationID
	s := &Supervisor{Store: st, Invocation: inv, LockTimeout: 5 * time.Second}
	w := &headedWatch{s: s, hookPath: HookPath(st, inv), sandbox: dir}
	write := func(in string) {
		t.Helper()
		if err := RecordHookEvent(strings.NewReader(in), w.hookPath); err != nil {
			t.Fatal(err)
		}
	}
	needsInput := func() int {
		evs, _ := st.ReadEvents(inv)
		n := 0
		for _, e := range evs {
			if e.Event == "needs_input" {
				n++
			}
		}
		return n
	}
	write(`{"hook_event_name":"UserPromptSubmit","prompt":"go"}`)
	w.tick(context.Background())
	write(`{"hook_event_name":"Stop","last_assistant_message":"done"}`)
	write(`{"hook_event_name":"UserPromptSubmit","prompt":"more"}`)
	w.tick(context.Background())
	if w.turns != 1 || w.turnDone {
		t.Fatalf("turns %d, turnDone %v; want the Stop counted, then a new turn", w.turns, w.turnDone)
	}
	if n := needsInput(); n != 1 {
		t.Fatalf("needs_input events = %d, want 1 for the Stop between the polls", n)
	}
	write(`{"hook_event_name":"PermissionRequest","tool_name":"Write","tool_input":{"file_path":"a.txt"}}`)
	write(`{"hook_event_name":"PostToolUse","tool_name":"Write","tool_input":{"file_path":"a.txt"}}`)
	w.tick(context.Background())
	if n := needsInput(); n != 2 {
		t.Fatalf("needs_input events = %d, want 2", n)
	}
	w.tick(context.Background())
	if n := needsInput(); n != 2 {
		t.Fatalf("needs_input events = %d after a quiet poll, want 2", n)
	}
	// An older event appended after the newer one is ignored.
	older := HookState{Event: "Stop", State: AgentNeedsInput, TurnDone: true, Summary: "old", Time: w.hook.Time.Add(-time.Second)}
	b, _ := json.Marshal(older)
	f, _ := os.OpenFile(w.hookPath, os.O_WRONLY|os.O_APPEND, 0o600)
	f.Write(append(b, '\n'))
	f.Close()
	w.tick(context.Background())
	if w.hook.Event != "PostToolUse" || w.turnDone {
		t.Fatalf("an older event replaced the newer: %+v", w.hook)
	}
}

// A stop types the quit command only at the agent's own prompt: never at a
// question, where its Enter could answer yes.
func TestHeadedWatchAtPrompt(t *testing.T) {
	w := &headedWatch{hasPrompt: true}
	if w.atPrompt() {
		t.Fatal("nothing reported: at its prompt")
	}
	var sc OSCScanner
	data, _ := os.ReadFile("testdata/hx2.pane.log")
	var got []bool
	for _, st := range sc.feed(data) {
		w.applyOSC(st)
		got = append(got, w.atPrompt())
	}
	// idle (before its prompt is submitted), working, blocked, working,
	// done, idle, clear
	if want := []bool{false, false, false, false, true, true, false}; !reflect.DeepEqual(got, want) {
		t.Errorf("codex: got %v, want %v", got, want)
	}
	w.dialog = "codex asks: Background server has incompatible feature settings"
	if w.atPrompt() {
		t.Error("a dialog: at its prompt")
	}
	c := &headedWatch{}
	for _, tc := range []struct {
		ev   string
		done bool
		want bool
	}{{"PermissionRequest", false, false}, {"Stop", true, true}, {"UserPromptSubmit", false, false}} {
		c.hook, c.hookSeen, c.turnDone = &HookState{Event: tc.ev}, time.Now(), tc.done
		if c.atPrompt() != tc.want {
			t.Errorf("claude after %s: at its prompt %v", tc.ev, !tc.want)
		}
	}
}
