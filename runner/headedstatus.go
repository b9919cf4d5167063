package runner

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/git-agency/git-agency/runner/stream"
	"github.com/git-agency/git-agency/runner/tmux"
	"github.com/git-agency/git-agency/store"
	"github.com/git-agency/git-agency/wall"
)

// A headed agent's true state comes from what it says itself, newest first:
//   - a blocking dialog on its screen that no hook or sequence reports
//     (claude's trust question, codex's folder trust and model notice);
//   - claude's hooks (logs/hook.jsonl, see hookstate.go);
//   - codex's OSC 7501 sequences in its pane output (logs/pane.log).
//
// The supervisor folds them into logs/status.json (Format HeadedFormat) on
// every poll, so readers (ls, show, watch) get "needs input" from one file
// read, within a poll of the wait beginning.

// HeadedFormat is LiveStatus.Format for a headed run's status.
const HeadedFormat = "headed"

// OSCState is one OSC 7501 report: `ESC ] 7501 ; state=<s> : app=<a>
// [: kind=<k>]` ended by BEL or ST.
type OSCState struct {
	State string // idle, working, blocked, done, clear
	App   string
	Kind  string // permission, …
}

// OSCScanner finds OSC 7501 sequences in a byte stream fed in chunks (a
// sequence may be split between chunks).
type OSCScanner struct{ pending []byte }

var oscIntro = []byte("\x1b]7501;")

// maxOSC bounds a sequence: a longer one is not ours.
const maxOSC = 512

// feed scans the next chunk and returns the complete sequences in it.
func (sc *OSCScanner) feed(p []byte) []OSCState {
	buf := append(sc.pending, p...)
	sc.pending = nil
	var out []OSCState
	for {
		i := bytes.Index(buf, oscIntro)
		if i < 0 {
			// Keep a tail that may be the start of an introducer.
			keep := len(oscIntro) - 1
			if keep > len(buf) {
				keep = len(buf)
			}

			tail := buf[len(buf)-keep:]
			if j := bytes.IndexByte(tail, 0x1b); j >= 0 {
				sc.pending = append([]byte(nil), tail[j:]...)
			}

			return out
		}

		body := buf[i+len(oscIntro):]
		end, termLen := -1, 0
		for k := 0; k < len(body) && k < maxOSC; k++ {
			if body[k] == 0x07 {
				end, termLen = k, 1
				break
			}

			if body[k] == 0x1b && k+1 < len(body) && body[k+1] == '\\' {
				end, termLen = k, 2
				break
			}
		}

		if end < 0 {
			if len(body) < maxOSC {
				sc.pending = append([]byte(nil), buf[i:]...)
				return out
			}
			buf = body
			continue
		}

		if st, ok := parseOSC(string(body[:end])); ok {
			out = append(out, st)
		}

		buf = body[end+termLen:]
	}
}

// parseOSC parses "state=working:app=codex:kind=permission".
func parseOSC(s string) (OSCState, bool) {
	var st OSCState
	for _, f := range strings.Split(s, ":") {
		k, v, _ := strings.Cut(f, "=")
		switch k {
		case "state":
			st.State = v
		case "app":
			st.App = v
		case "kind":
			st.Kind = v
		}
	}

	return st, st.State != ""
}

// Dialog is a blocking question found on an agent's screen.
type Dialog struct{ Summary string }

var (
	claudeTrustRE = regexp.MustCompile(`(?i)(one you trust\?|do you trust the files in this folder)`)
	// A codex selection list: the selected option "› N. …" (any of them:
	// its background-server dialog selects "3. Cancel") and another
	// numbered option beside it, or a confirm hint below.
	codexSelectRE  = regexp.MustCompile(`(?m)^\s*›\s*\d+\.\s+\S`)
	codexOptionRE  = regexp.MustCompile(`(?m)^\s+\d+\.\s+\S`)
	codexConfirmRE = regexp.MustCompile(`(?i)(\benter\b\S*( to)? (confirm|continue|select)|press enter)`)
	codexTrustRE   = regexp.MustCompile(`(?i)(trust this folder\?|trust the contents of this directory|allow codex to work in this folder|do you trust)`)
)

// screenDialog finds on a screen (capture-pane text of the visible screen)
// a dialog that blocks a runner of the given format before it reports any
// state: claude's trust question; codex's folder trust, or any selection
// list it shows at start (the model notice, "Background server has
// incompatible feature settings"). Codex prints no OSC 7501 state before
// its first prompt, so its screen is the only witness.
func screenDialog(format, screen string) (Dialog, bool) {
	switch format {
	case stream.FormatClaude:
		if claudeTrustRE.MatchString(screen) {
			return Dialog{"claude asks whether to trust this folder (trust the repository once in claude; its sandboxes follow)"}, true
		}
	case stream.FormatCodex:
		if codexTrustRE.MatchString(screen) && codexSelectRE.MatchString(screen) {
			return Dialog{"codex asks whether to trust this folder"}, true
		}
		if codexSelectRE.MatchString(screen) && (codexConfirmRE.MatchString(screen) || codexOptionRE.MatchString(screen)) {
			return Dialog{summaryText("codex asks: " + firstText(screen))}, true
		}
	}

	return Dialog{}, false
}

// firstText is the first line of a screen with words in it (not a banner
// or a box border).
func firstText(screen string) string {
	for _, l := range strings.Split(screen, "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, ">_") || strings.HasPrefix(l, "›") {
			continue
		}

		letters := 0
		for _, r := range l {
			if r >= 'A' && r <= 'z' {
				letters++
			}
		}

		if letters >= 3 && !strings.Contains(l, "OpenAI Codex") && !strings.HasPrefix(l, "/") {
			return l
		}
	}

	return "a question"
}

// codexPermissionSummary picks the question and command of a codex
// approval screen ("Would you like to run the following command?", "$ …").
func codexPermissionSummary(screen string) string {
	q, cmd := "", ""
	for _, l := range strings.Split(screen, "\n") {
		l = strings.TrimSpace(l)
		switch {
		case q == "" && strings.HasPrefix(l, "Would you like"):
			q = l
		case cmd == "" && strings.HasPrefix(l, "$ "):
			cmd = strings.TrimPrefix(l, "$ ")
		}
	}

	switch {
	case cmd != "":
		return summaryText("permission: " + cmd)
	case q != "":
		return summaryText("permission: " + q)
	}

	return "codex asks for permission"
}

// codexLastMessage is the last bullet ("• …") above codex's last "Worked
// for" line: its final message of the latest turn ("" if the screen has
// none). A resumed thread shows the earlier turns above it, each with its
// own "Worked for" line.
func codexLastMessage(screen string) string {
	last, msg := "", ""
	for _, l := range strings.Split(screen, "\n") {
		t := strings.TrimSpace(l)
		if strings.HasPrefix(t, "Worked for") {
			msg = last
		}
		if strings.HasPrefix(l, "• ") {
			last = strings.TrimPrefix(l, "• ")
		}
	}
	return summaryText(msg)
}

// headedWatch follows a headed agent's own reports while it runs.
type headedWatch struct {
	s         *Supervisor
	client    *tmux.Client
	pane      string
	format    string
	hasPrompt bool
	hookPath  string
	panePath  string
	sandbox   string

	paneOff int64
	osc     OSCScanner

	hook     *HookState
	hookOff  int64     // how much of hook.jsonl was read
	hookSeen time.Time // when a new hook state was read

	oscState   string // active, needs_input, ended
	oscLast    string // the latest OSC 7501 state (idle, working, …)
	oscSummary string
	oscSeen    time.Time
	sawWorking bool

	dialog      string
	lastCapture time.Time

	// began is when the run started; turnFrom when the current turn's
	// refusals start (the end of the one before). codexHome is where a
	// codex keeps its session logs ("" for other agents).
	began, turnFrom time.Time
	codexHome       string

	turns     int
	turnDone  bool
	turnError bool
	lastMsg   string
	sessionID string

	published stream.StreamState
	events    int64
}

func newHeadedWatch(s *Supervisor, client *tmux.Client, pane string, rec *store.InvocationRecord, began time.Time) *headedWatch {
	logs := s.Store.SandboxLogsDir(s.Invocation)
	w := &headedWatch{s: s, client: client, pane: pane, format: s.Spec.Format,
		hasPrompt: rec.PromptSource != "", hookPath: filepath.Join(logs, hookFile),
		panePath: filepath.Join(logs, PaneLog), sandbox: rec.SandboxPath, began: began, turnFrom: began}
	if w.format == stream.FormatCodex {
		w.codexHome = codexHome(agentEnv(rec))
		if rec.Isolation == wall.IsolateBwrap {
			// Walled, codex keeps its sessions in the invocation's own
			// state (CODEX_HOME inside the wall).
			w.codexHome = wall.CodexDir(wall.StateDir(s.Store, rec.InvocationID))
		}
	}

	return w
}

// refusals counts the tool calls a headed codex's own sandbox or approval
// policy refused since `since` (its screen shows none of them), with the
// latest one's summary.
func (w *headedWatch) refusals(since time.Time) (int, string) {
	if w.codexHome == "" {
		return 0, ""
	}
	return codexRolloutDenials(w.codexHome, w.sandbox, since)
}

// screenEvery is how often the screen is read for a dialog before the agent
// reported any state.
const screenEvery = time.Second

// tick reads what changed and republishes status.json when the state moved.
func (w *headedWatch) tick(ctx context.Context) {
	w.readHook(func() {
		w.publish()
		w.s.checkWaiting(w.sandbox, true)
	})
	w.readPane()

	if (w.format == stream.FormatClaude || w.format == stream.FormatCodex) &&
		w.hook == nil && w.oscState == "" && time.Since(w.lastCapture) >= screenEvery {
		w.lastCapture = time.Now()
		w.dialog = ""
		if d, ok := screenDialog(w.format, w.screen(ctx)); ok {
			w.dialog = d.Summary
		}
	} else if w.hook != nil || w.oscState != "" {
		w.dialog = ""
	}

	w.publish()
	w.s.checkWaiting(w.sandbox, true)
}

// screen is the pane's visible screen ("" if it cannot be read).
func (w *headedWatch) screen(ctx context.Context) string {
	if w.client == nil {
		return ""
	}
	scr, err := w.client.CaptureScreen(ctx, w.pane)
	if err != nil {
		return ""
	}
	return string(scr)
}

// readHook takes the hook events appended since the last read, in order,
// calling each (when set) after every event but the last, so that two
// events between two polls are both seen: a turn counted, a needs-input
// entry published and notified. An event older than the one taken (two
// hooks at once, appended out of order) still counts its turn but does not
// turn the state back.
func (w *headedWatch) readHook(each func()) {
	events, off := readHookEvents(w.hookPath, w.hookOff)
	w.hookOff = off
	for i := range events {
		hs := events[i]

		if i > 0 && each != nil {
			each()
		}
		if hs.TurnDone {
			w.turns++
		}
		if w.hook != nil && hs.Time.Before(w.hook.Time) {
			continue
		}

		w.hook, w.hookSeen = &hs, time.Now()
		w.dialog = ""
		if hs.SessionID != "" {
			w.sessionID = hs.SessionID
		}

		switch hs.Event {
		case "UserPromptSubmit":
			w.turnDone, w.turnError = false, false
		case "Stop", "StopFailure":
			w.turnDone, w.turnError = true, hs.TurnError
			w.lastMsg = hs.Summary
		}
	}
}

func (w *headedWatch) readPane() {
	f, err := store.ReadLog(w.panePath)
	if err != nil {
		return
	}
	defer f.Close()

	if _, err := f.Seek(w.paneOff, io.SeekStart); err != nil {
		return
	}

	buf := make([]byte, 64<<10)
	for {
		n, err := f.Read(buf)
		if n > 0 {
			w.paneOff += int64(n)
			for _, st := range w.osc.feed(buf[:n]) {
				w.applyOSC(st)
			}
		}

		if err != nil {
			return
		}
	}
}

// applyOSC maps a codex state: working → active; blocked → needs input;
// done → needs input at its prompt (the turn ended); idle → needs input at
// its prompt, except before the first turn of a run given a prompt (codex
// reports idle before it submits it); clear → ended.
func (w *headedWatch) applyOSC(st OSCState) {
	w.oscSeen, w.oscLast = time.Now(), st.State
	switch st.State {
	case "working":
		w.sawWorking = true
		w.oscState, w.oscSummary = AgentActive, "working"
		w.turnDone, w.turnError = false, false
	case "blocked":
		w.oscState, w.oscSummary = AgentNeedsInput, "codex is blocked"
		if st.Kind == "permission" {
			w.oscSummary = codexPermissionSummary(w.screen(context.Background()))
		}
	case "done":
		w.turns++
		w.turnDone = true
		w.oscState, w.oscSummary = AgentNeedsInput, "turn done; waiting at its prompt"
		if msg := codexLastMessage(w.screen(context.Background())); msg != "" {
			w.oscSummary, w.lastMsg = msg, msg
		}

		// A turn whose tool calls codex refused says so before what the
		// agent claims ("Done: wrote the file.").
		if n, denial := w.refusals(w.turnFrom); n > 0 {
			w.oscSummary = denial + prefixed("; then: ", w.lastMsg)
		}

		w.turnFrom = time.Now()
	case "idle":
		if w.hasPrompt && !w.sawWorking {
			w.oscState, w.oscSummary = AgentActive, "starting"
			return
		}
		if w.oscState != AgentNeedsInput {
			w.oscState, w.oscSummary = AgentNeedsInput, "waiting at its prompt"
		}
	case "clear":
		w.oscState, w.oscSummary = AgentEnded, "exiting"
	}
}

// atPrompt says whether the agent said it waits at its own prompt, with no
// dialog or question up: claude's turn ended (Stop) and nothing came since
// but a note that it is idle; codex's newest state is done or idle. What is
// typed there is a prompt, never the answer to a question.
func (w *headedWatch) atPrompt() bool {
	if w.dialog != "" {
		return false
	}
	useHook := w.hook != nil && (w.oscState == "" || !w.hookSeen.Before(w.oscSeen))
	switch {
	case useHook:
		return w.turnDone && w.hook.Event != "PermissionRequest"
	case w.oscState != "":
		return w.oscLast == "done" || (w.oscLast == "idle" && (w.sawWorking || !w.hasPrompt))
	}
	return false
}

// current is the combined state: a screen dialog, else the newer of the
// hook's and the OSC's report ("" when nothing reported yet).
func (w *headedWatch) current() (state, summary string) {
	if w.dialog != "" {
		return AgentNeedsInput, w.dialog
	}
	useHook := w.hook != nil && (w.oscState == "" || !w.hookSeen.Before(w.oscSeen))
	switch {
	case useHook:
		return w.hook.State, w.hook.Summary
	case w.oscState != "":
		return w.oscState, w.oscSummary
	}
	return "", ""
}

// publish writes status.json when the combined state changed.
func (w *headedWatch) publish() {
	state, summary := w.current()
	if state == "" {
		return
	}

	st := stream.StreamState{
		LastKind:       "agent_state",
		LastSummary:    summary,
		LastMessage:    w.lastMsg,
		SessionID:      w.sessionID,
		WaitingForUser: state == AgentNeedsInput,
	}
	p := w.published
	if w.events > 0 && p.LastSummary == st.LastSummary && p.LastMessage == st.LastMessage &&
		p.SessionID == st.SessionID && p.WaitingForUser == st.WaitingForUser {
		return
	}

	w.events++
	st.Events, st.LastEventAt = w.events, time.Now().UTC()
	ls := LiveStatus{UpdatedAt: st.LastEventAt, Format: HeadedFormat, SessionID: st.SessionID, State: st}
	if err := writeVolatile(statusPath(w.s.Store, w.s.Invocation), ls); err != nil {
		w.s.logf("status.json: %v", err)
		return
	}

	w.published = st
}

// final is the semantic status, summary, session id and usage of the
// ended run, from its reports and its last screen (screen.txt).
func (w *headedWatch) final(rec *store.InvocationRecord) (status, summary, session string, usage *store.Usage) {
	w.readHook(nil)
	w.readPane()
	screen, _ := os.ReadFile(filepath.Join(w.s.Store.SandboxLogsDir(w.s.Invocation), ScreenLog))
	session = w.sessionID
	if session == "" {
		session = resumeID(string(screen))
	}

	usage = tokenUsage(string(screen))
	if usage == nil && w.turns > 0 {
		usage = &store.Usage{}
	}
	if usage != nil {
		usage.Turns = w.turns
	}
	if rs, _ := stream.ReadRunnerStatus(rec.SandboxPath); rs != nil {
		return rs.Status, rs.Summary, session, usage
	}

	switch {
	case w.turnError:
		return stream.StatusError, strings.TrimPrefix(w.lastMsg, "error: "), session, usage
	case w.turnDone:
		status, summary = w.doneStatus(rec)
		return status, summary, session, usage
	}

	return "", "", session, usage
}

// doneStatus is the semantic status of a run whose last turn ended: ready
// for review, unless codex refused some of its tool calls. Then, as for a
// headless run, blocked when the sandbox holds nothing new (the agent's
// "Done" claims work that never happened), else needs input.
func (w *headedWatch) doneStatus(rec *store.InvocationRecord) (status, summary string) {
	n, denial := w.refusals(w.began)
	switch {
	case n == 0:
		return stream.StatusReadyForReview, w.lastMsg
	case w.s.unchanged(rec):
		return stream.StatusBlocked, "nothing changed: " + denial
	}
	return stream.StatusNeedsInput, denial + prefixed("; then: ", w.lastMsg)
}

var (
	resumeRE = regexp.MustCompile(`(?:claude --resume|codex resume)\s+([0-9A-Za-z][0-9A-Za-z-]{7,})`)
	usageRE  = regexp.MustCompile(`Token usage(?: so far)?: total=([\d,]+) input=([\d,]+)(?: \(\+ ([\d,]+) cached\))? output=([\d,]+)(?: \(reasoning ([\d,]+)\))?`)
)

// resumeID is the session id a CLI printed on its last screen
// ("claude --resume <id>", "codex resume <id>"); "" if none.
func resumeID(screen string) string {
	m := resumeRE.FindAllStringSubmatch(screen, -1)
	if len(m) == 0 {
		return ""
	}
	return m[len(m)-1][1]
}

// tokenUsage parses codex's `Token usage: total=… input=… (+ N cached)
// output=… (reasoning N)` line (`Token usage so far:` when its background
// server keeps the thread; the last one counts; nil if there is none).
func tokenUsage(screen string) *store.Usage {
	m := usageRE.FindAllStringSubmatch(screen, -1)
	if len(m) == 0 {
		return nil
	}
	last := m[len(m)-1]
	num := func(s string) int64 {
		n, _ := strconv.ParseInt(strings.ReplaceAll(s, ",", ""), 10, 64)
		return n
	}
	return &store.Usage{InputTokens: num(last[2]), OutputTokens: num(last[4]),
		CachedInputTokens: num(last[3]), ReasoningTokens: num(last[5])}
}
