package watch

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/viewport"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/git-agency/git-agency/errs"
	"github.com/git-agency/git-agency/internal/subproc"
)

// Messages. Each comes back from a tea.Cmd.
type (
	tickMsg     time.Time
	snapshotMsg struct {
		snap Snapshot
		err  error
	}
	// actionMsg is the result of a non-exec action.
	actionMsg struct {
		text string
		err  error
	}
	pagerMsg struct {
		kind, invID string
		content     string
		err         error
	}
	execReadyMsg struct {
		what string
		cmd  *subproc.Terminal
		err  error
	}
	execDoneMsg struct {
		what string
		err  error
	}
)

// Init starts the first load and the refresh clock.
func (m Model) Init() tea.Cmd {
	return tea.Batch(m.loadCmd(), m.tickCmd())
}

func (m Model) tickCmd() tea.Cmd {
	return tea.Tick(m.interval, func(t time.Time) tea.Msg { return tickMsg(t) })
}

func (m Model) loadCmd() tea.Cmd {
	load, ctx := m.loader, m.ctx
	return func() tea.Msg {
		if load == nil {
			return snapshotMsg{}
		}
		snap, err := safeLoad(func() (Snapshot, error) { return load(ctx) })
		return snapshotMsg{snap: snap, err: err}
	}
}

// refresh starts a load unless one is in flight (then one more follows it).
func (m *Model) refresh() tea.Cmd {
	if m.loading {
		m.reload = true
		return nil
	}
	m.loading = true
	return m.loadCmd()
}

// Update handles a message.
func (m Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
		if m.mode == modePager {
			m.pager.vp.Width, m.pager.vp.Height = m.pagerSize()
		}
		m.help.Width = m.width
		m.scrollToCursor()
		return m, nil

	case tickMsg:
		cmds := []tea.Cmd{m.tickCmd(), m.refresh()}
		if m.mode == modePager && m.pager.kind == "logs" && !m.pager.busy {
			m.pager.busy = true
			cmds = append(cmds, m.pagerCmd(m.pager.kind, m.pager.inv))
		}
		return m, tea.Batch(cmds...)

	case snapshotMsg:
		m.loading = false
		if msg.err != nil {
			m.loadErr = msg.err
		} else {
			m.loadErr = nil
			m.snap = msg.snap
			m.loaded = true
			m.rebuild()
		}

		if m.reload {
			m.reload = false
			return m, m.refresh()
		}

		return m, nil

	case applyStatMsg:
		if msg.err != nil {
			m.setStatus("land --apply: "+errText(msg.err), true)
			return m, nil
		}
		m.setStatus("", false)
		m.confirm = &confirmation{verb: "apply", inv: msg.inv, prompt: msg.prompt, detail: msg.stat}
		return m, nil

	case actionMsg:
		m.busy = ""
		if msg.err != nil {
			m.setStatus(errText(msg.err), true)
		} else {
			m.setStatus(msg.text, false)
		}
		return m, m.refresh()

	case pagerMsg:
		if m.mode != modePager || msg.kind != m.pager.kind || msg.invID != m.pager.inv.ID {
			return m, nil
		}

		m.pager.busy = false
		if msg.err != nil {
			if !m.pager.loaded {
				m.mode = modeList
			}
			m.setStatus(errText(msg.err), true)
			return m, nil
		}

		follow := !m.pager.loaded || m.pager.vp.AtBottom()
		m.pager.vp.SetContent(msg.content)
		if m.pager.kind == "logs" && follow {
			m.pager.vp.GotoBottom()
		}

		m.pager.loaded = true
		return m, nil

	case execReadyMsg:
		if msg.err != nil {
			m.busy = ""
			m.setStatus(errText(msg.err), true)
			return m, nil
		}
		what := msg.what
		return m, tea.Exec(msg.cmd, func(err error) tea.Msg { return execDoneMsg{what: what, err: err} })

	case execDoneMsg:
		m.busy = ""
		if msg.err != nil {
			m.setStatus(fmt.Sprintf("%s: %v", msg.what, msg.err), true)
		} else {
			m.setStatus("back from "+msg.what, false)
		}
		return m, m.refresh()

	case tea.KeyMsg:
		return m.handleKey(msg)
	}

	if m.mode == modePager {
		var cmd tea.Cmd
		m.pager.vp, cmd = m.pager.vp.Update(msg)
		return m, cmd
	}

	return m, nil
}

func (m Model) handleKey(msg tea.KeyMsg) (tea.Model, tea.Cmd) {
	// Keys typed faster than the terminal is read arrive as one message
	// ("jl"): handle them one by one.
	if msg.Type == tea.KeyRunes && len(msg.Runes) > 1 && !msg.Paste {
		return m.handleRunes(msg)
	}

	// A pending confirmation, the pager and an open help take the key
	// first; then the keys that need no selection (quit, help, moving,
	// clearing the status line); any other acts on the selection.
	k := m.keys
	switch {
	case msg.String() == "ctrl+c":
		return m, tea.Quit
	case m.confirm != nil:
		return m.answerConfirm(msg)
	case m.mode == modePager:
		return m.pagerKey(msg)
	case m.help.ShowAll && key.Matches(msg, k.Back):
		m.help.ShowAll = false

	case key.Matches(msg, k.Quit):
		return m, tea.Quit
	case key.Matches(msg, k.Help):
		m.help.ShowAll = !m.help.ShowAll
		m.scrollToCursor()
	case key.Matches(msg, k.Up):
		m.move(-1)
	case key.Matches(msg, k.Down):
		m.move(1)
	case key.Matches(msg, k.Top):
		m.move(-len(m.items))
	case key.Matches(msg, k.Bottom):
		m.move(len(m.items))
	case key.Matches(msg, k.Back):
		m.setStatus("", false)

	default:
		return m.selectionKey(msg)
	}

	return m, nil
}

// handleRunes handles several typed keys that arrived as one message.
func (m Model) handleRunes(msg tea.KeyMsg) (tea.Model, tea.Cmd) {
	var cmds []tea.Cmd
	var mm tea.Model = m
	for _, r := range msg.Runes {
		var cmd tea.Cmd
		mm, cmd = mm.(Model).handleKey(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{r}, Alt: msg.Alt})
		cmds = append(cmds, cmd)
	}

	return mm, tea.Sequence(cmds...)
}

// answerConfirm takes the answer to a pending confirmation: yes runs it,
// any other key cancels it.
func (m Model) answerConfirm(msg tea.KeyMsg) (tea.Model, tea.Cmd) {
	c := m.confirm
	m.confirm = nil
	if key.Matches(msg, m.keys.Yes) {
		return m.runAction(c.verb, c.inv)
	}
	m.setStatus(c.verb+" cancelled", false)
	return m, nil
}

// pagerKey is a key in the pager: back, quit, or scrolling.
func (m Model) pagerKey(msg tea.KeyMsg) (tea.Model, tea.Cmd) {
	switch {
	case key.Matches(msg, m.keys.Back):
		m.mode = modeList
		return m, nil
	case key.Matches(msg, m.keys.Quit):
		return m, tea.Quit
	}

	var cmd tea.Cmd
	m.pager.vp, cmd = m.pager.vp.Update(msg)
	return m, cmd
}

// selectionKey handles the keys that act on the selected worktree or
// invocation.
func (m Model) selectionKey(msg tea.KeyMsg) (tea.Model, tea.Cmd) {
	wt, inv := m.selection()
	if wt == nil {
		return m, nil
	}

	switch {
	case key.Matches(msg, m.keys.Open):
		return m.startExec("editor", wt, nil)
	case key.Matches(msg, m.keys.Shell):
		return m.startExec("shell", wt, nil)
	}

	verb := m.keys.verb(msg)
	if verb == "" {
		return m, nil
	}

	if inv == nil {
		m.setStatus(verb+": select an invocation (↓/j)", true)
		return m, nil
	}

	if inv.Display == StatusBroken {
		m.setStatus(fmt.Sprintf("%s: invocation %s has a broken record (%s)", verb, inv.ID, inv.Summary), true)
		return m, nil
	}

	// Do verb to it: attach (or its logs when headless), a pager, a
	// confirmation first (land, discard, kill), or stop.
	switch verb {
	case "attach":
		if inv.Mode != "headed" {
			return m.openPager("logs", *inv)
		}
		return m.startExec("attach", wt, inv)
	case "diff", "logs", "verify":
		return m.openPager(verb, *inv)
	case "land", "apply":
		// A row whose work is uncommitted lands only with --apply: L
		// asks for that, with what it would take.
		if verb == "apply" || inv.Display == StatusReadyApply || inv.Apply {
			return m.applyStat(wt, *inv)
		}
		m.confirm = &confirmation{verb: verb, inv: *inv, prompt: confirmPrompt(verb, wt, inv)}
		return m, nil
	case "discard", "kill":
		m.confirm = &confirmation{verb: verb, inv: *inv, prompt: confirmPrompt(verb, wt, inv)}
		return m, nil
	case "stop":
		return m.runAction("stop", *inv)
	}

	return m, nil
}

// verb is the invocation action a key asks for ("" for none).
func (k KeyMap) verb(msg tea.KeyMsg) string {
	for _, b := range []struct {
		binding key.Binding
		verb    string
	}{
		{k.Attach, "attach"}, {k.Diff, "diff"}, {k.Logs, "logs"}, {k.VerifyLog, "verify"}, {k.Land, "land"}, {k.Apply, "apply"},
		{k.Discard, "discard"}, {k.Stop, "stop"}, {k.Kill, "kill"},
	} {
		if key.Matches(msg, b.binding) {
			return b.verb
		}
	}

	return ""
}

func confirmPrompt(verb string, wt *WorktreeRow, inv *InvocationRow) string {
	target := wt.Name
	if target == "" {
		target = wt.ID
	}

	switch verb {
	case "land":
		return fmt.Sprintf("land %s (%s) into %s? [y/n]", inv.ShortID, inv.Runner, target)
	case "apply":
		return fmt.Sprintf("land %s (%s) into %s with its uncommitted work (--apply)? [y/n]", inv.ShortID, inv.Runner, target)
	case "discard":
		return fmt.Sprintf("discard %s (%s) and delete its sandbox? [y/n]", inv.ShortID, inv.Runner)
	default:
		return fmt.Sprintf("kill %s (%s)? [y/n]", inv.ShortID, inv.Runner)
	}
}

// runAction runs a status-line action in a tea.Cmd.
func (m Model) runAction(verb string, inv InvocationRow) (Model, tea.Cmd) {
	if m.actions == nil {
		m.setStatus(verb+": not available", true)
		return m, nil
	}

	if m.busy != "" {
		// One action at a time: two lands at once would race.
		m.setStatus(verb+": wait, "+m.busy+" is still running", true)
		return m, nil
	}

	acts, ctx := m.actions, m.ctx
	m.busy = verb + " " + inv.ShortID + "…"
	m.setStatus(m.busy, false)
	return m, func() tea.Msg {
		var text string
		err := safeCall(func() error {
			var err error
			switch verb {
			case "land":
				text, err = acts.Land(ctx, inv)
			case "apply":
				text, err = acts.LandApply(ctx, inv)
			case "discard":
				text, err = acts.Discard(ctx, inv)
			case "stop":
				text, err = acts.Stop(ctx, inv)
			case "kill":
				text, err = acts.Kill(ctx, inv)
			}

			return err
		})
		return actionMsg{text: text, err: err}
	}
}

// applyStat reads, in a tea.Cmd, what a land --apply of inv would take;
// the answer (applyStatMsg) asks for the confirmation with it shown.
func (m Model) applyStat(wt *WorktreeRow, inv InvocationRow) (tea.Model, tea.Cmd) {
	if m.actions == nil {
		m.setStatus("land --apply: not available", true)
		return m, nil
	}

	acts, ctx := m.actions, m.ctx
	prompt := confirmPrompt("apply", wt, &inv)
	m.setStatus("land --apply "+inv.ShortID+": reading its changes…", false)
	return m, func() tea.Msg {
		var stat []string
		err := safeCall(func() error {
			var err error
			stat, err = acts.ApplyStat(ctx, inv)
			return err
		})
		return applyStatMsg{inv: inv, prompt: prompt, stat: stat, err: err}
	}
}

// applyStatMsg is what a land --apply would take, read for its
// confirmation.
type applyStatMsg struct {
	inv    InvocationRow
	prompt string
	stat   []string
	err    error
}

// startExec prepares an exec-style action in a tea.Cmd; Update then runs it
// with tea.Exec.
func (m Model) startExec(what string, wt *WorktreeRow, inv *InvocationRow) (tea.Model, tea.Cmd) {
	if m.actions == nil {
		m.setStatus(what+": not available", true)
		return m, nil
	}

	if inv == nil && (wt.State == "broken" || wt.State == "orphaned") {
		m.setStatus(fmt.Sprintf("%s: worktree record %s is %s", what, wt.ID, wt.State), true)
		return m, nil
	}

	acts, ctx := m.actions, m.ctx
	w := *wt
	var iv InvocationRow
	if inv != nil {
		iv = *inv
	}

	return m, func() tea.Msg {
		var cmd *subproc.Terminal
		err := safeCall(func() error {
			var err error
			switch what {
			case "attach":
				cmd, err = acts.Attach(ctx, iv)
			case "editor":
				cmd, err = acts.Open(ctx, w)
			case "shell":
				cmd, err = acts.Shell(ctx, w)
			}

			return err
		})
		if err == nil && cmd == nil {
			err = fmt.Errorf("%s: nothing to run", what)
		}

		return execReadyMsg{what: what, cmd: cmd, err: err}
	}
}

// openPager switches to the diff or logs view and loads its content.
func (m Model) openPager(kind string, inv InvocationRow) (tea.Model, tea.Cmd) {
	if m.actions == nil {
		m.setStatus(kind+": not available", true)
		return m, nil
	}

	w, h := m.pagerSize()
	m.mode = modePager
	m.pager = pager{kind: kind, inv: inv, vp: viewport.New(w, h), busy: true}
	m.pager.vp.SetContent("loading…")
	return m, m.pagerCmd(kind, inv)
}

func (m Model) pagerCmd(kind string, inv InvocationRow) tea.Cmd {
	acts, ctx := m.actions, m.ctx
	return func() tea.Msg {
		var content string
		err := safeCall(func() error {
			var err error
			switch kind {
			case "diff":
				content, err = acts.Diff(ctx, inv)
			case "verify":
				content, err = acts.VerifyLog(ctx, inv)
			default:
				content, err = acts.Logs(ctx, inv)
			}

			return err
		})
		content = strings.ReplaceAll(content, "\t", "    ")
		return pagerMsg{kind: kind, invID: inv.ID, content: content, err: err}
	}
}

// pagerSize is the viewport's size: the screen minus a title and a footer.
func (m Model) pagerSize() (int, int) {
	h := m.height - 2
	if h < 1 {
		h = 1
	}
	return m.width, h
}

// safeLoad and safeCall turn a panic in a loader or action (a record shaped
// in a way nobody foresaw) into an error in the status line.
func safeLoad(f func() (Snapshot, error)) (s Snapshot, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("internal error while loading: %v", r)
		}
	}()
	return f()
}

func safeCall(f func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("internal error: %v", r)
		}
	}()
	return f()
}

// errText is an error as one status line: "E_CODE: message: details
// (hint: …)" for our typed errors, the text otherwise.
func errText(err error) string {
	var e *errs.Error
	if !errors.As(err, &e) {
		return strings.ReplaceAll(err.Error(), "\n", " ")
	}

	s := string(e.Code) + ": " + e.Msg
	if e.Msg == "" && e.Err != nil {
		s += e.Err.Error()
	}

	if len(e.Detail) > 0 {
		s += ": " + strings.Join(e.Detail, ", ")
	}

	if e.Hint != "" {
		s += " (hint: " + e.Hint + ")"
	}

	return strings.Join(strings.Fields(s), " ")
}
