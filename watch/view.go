package watch

import (
	"fmt"
	"github.com/git-agency/git-agency/agency"
	"strings"
	"time"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
)

// Styles of the view. Built from a lipgloss renderer, so the colour profile
// (and NO_COLOR) is the renderer's.
type Styles struct {
	Title, Dim, Worktree, Selected lipgloss.Style
	Status                         map[string]lipgloss.Style
	StatusLine, StatusErr, Prompt  lipgloss.Style
	HelpKey, HelpDesc              lipgloss.Style
}

// DefaultStyles are the styles on lipgloss's default renderer.
func DefaultStyles() Styles { return NewStyles(lipgloss.DefaultRenderer()) }

// NewStyles builds the styles on renderer r.
func NewStyles(r *lipgloss.Renderer) Styles {
	c := func(s string) lipgloss.Style { return r.NewStyle().Foreground(lipgloss.Color(s)) }
	return Styles{
		Title:    r.NewStyle().Bold(true),
		Dim:      c("8"),
		Worktree: r.NewStyle().Bold(true),
		Selected: r.NewStyle().Reverse(true),
		Status: map[string]lipgloss.Style{
			StatusActive:          c("2"),
			StatusStarting:        c("2"),
			StatusStalled:         c("3"),
			StatusNeedsInput:      c("5").Bold(true),
			StatusReady:           c("6").Bold(true),
			StatusReadyApply:      c("6").Bold(true),
			StatusVerifyFailed:    c("1").Bold(true),
			StatusVerifying:       c("3"),
			StatusVerifyCancelled: c("3").Bold(true),
			StatusVerifyError:     c("5"),
			StatusStopped:         c("8"),
			StatusLanded:          c("8"),
			StatusDiscarded:       c("8"),
			StatusFailed:          c("1"),
			StatusBroken:          c("1").Bold(true),
			StatusWorktreeRemoved: c("8"),
		},
		StatusLine: c("8"),
		StatusErr:  c("1"),
		Prompt:     c("3").Bold(true),
		HelpKey:    c("7"),
		HelpDesc:   c("8"),
	}
}

// View renders the screen.
func (m Model) View() string {
	if m.mode == modePager {
		return m.pagerView()
	}

	var b strings.Builder
	b.WriteString(m.titleLine())
	b.WriteByte('\n')

	helpView := m.help.View(m)
	listH := m.listHeight()

	// Only the lines on screen are rendered: the list may hold a thousand
	// invocations, and View runs after every message.
	lines := m.listLines(m.offset, m.offset+listH)
	for i := 0; i < listH; i++ {
		if n := m.offset + i; n < len(lines) {
			b.WriteString(lines[n])
		}
		b.WriteByte('\n')
	}

	b.WriteString(m.statusLine())
	b.WriteByte('\n')
	hl := strings.Split(helpView, "\n")
	for i := range hl {
		hl[i] = truncate(hl[i], m.width)
	}

	b.WriteString(strings.Join(hl, "\n"))
	return b.String()
}

// listHeight is the number of lines left for the tree.
func (m Model) listHeight() int {
	h := m.height - 1 - lipgloss.Height(m.statusLine()) - lipgloss.Height(m.help.View(m))
	if h < 1 {
		h = 1
	}
	return h
}

func (m Model) titleLine() string {
	var active, ready, needs int
	for _, wt := range m.snap.Worktrees {
		c := wt.Counts()
		active += c.Active
		ready += c.Ready
		needs += c.NeedsInput
	}

	title := "git agency watch"
	if m.title != "" {
		title += " · " + m.title
	}

	summary := fmt.Sprintf("%s · %d active · %d ready · %d needs input",
		agency.Plural(len(m.snap.Worktrees), "worktree"), active, ready, needs)
	gap := m.width - lipgloss.Width(title) - lipgloss.Width(summary)
	if gap < 2 {
		return truncate(m.styles.Title.Render(title)+"  "+m.styles.Dim.Render(summary), m.width)
	}

	return m.styles.Title.Render(title) + strings.Repeat(" ", gap) + m.styles.Dim.Render(summary)
}

func (m Model) statusLine() string {
	var s string
	switch {
	case m.confirm != nil && len(m.confirm.detail) > 0:
		return m.confirmDetail()
	case m.confirm != nil:
		s = m.styles.Prompt.Render(m.confirm.prompt)
	case m.status != "" && m.statusErr:
		s = m.styles.StatusErr.Render(m.status)
	case m.status != "":
		s = m.styles.StatusLine.Render(m.status)
	case m.loadErr != nil:
		s = m.styles.StatusErr.Render("refresh failed: " + errText(m.loadErr))
	case m.snap.Warning != "":
		s = m.styles.StatusErr.Render(m.snap.Warning)
	case !m.loaded:
		s = m.styles.StatusLine.Render("loading…")
	case m.selectedConflict() != "":
		s = m.styles.StatusErr.Render(m.selectedConflict())
	default:
		s = m.styles.StatusLine.Render("every " + m.interval.String() + " · ? for help")
	}

	return m.wrap2(s)
}

// confirmDetail is a confirmation with what it would do above its prompt
// (land --apply's diffstat), cut to half the screen.
func (m Model) confirmDetail() string {
	c := m.confirm
	max := m.height / 2
	if max < 2 {
		max = 2
	}

	lines := c.detail
	if len(lines) > max-1 {
		lines = append(append([]string(nil), lines[:max-2]...), fmt.Sprintf("… %d more", len(c.detail)-(max-2)))
	}

	out := make([]string, 0, len(lines)+1)
	for _, l := range lines {
		out = append(out, truncate(m.styles.StatusLine.Render(l), m.width))
	}

	out = append(out, m.wrap2(m.styles.Prompt.Render(c.prompt)))
	return strings.Join(out, "\n")
}

// selectedConflict is the forecast of the selected invocation when it would
// conflict, in full: the row's mark may be cut off on a narrow screen.
func (m Model) selectedConflict() string {
	_, inv := m.selection()
	if inv != nil && inv.LandRefused != "" {
		return fmt.Sprintf("%s: land refuses it (%s); 'git agency agent land --check --apply %s' says why", inv.ShortID, inv.LandRefused, inv.ShortID)
	}
	if inv == nil || len(inv.ConflictsWith) == 0 {
		return ""
	}

	return fmt.Sprintf("%s would conflict with %s, in %s", inv.ShortID,
		strings.Join(inv.ConflictsWith, ", "), strings.Join(inv.ConflictFiles, ", "))
}

// wrap2 fits a status message in at most two lines of the screen's width.
func (m Model) wrap2(s string) string {
	if m.width <= 0 || ansi.StringWidth(s) <= m.width {
		return s
	}

	lines := strings.Split(ansi.Wrap(s, m.width, " "), "\n")
	if len(lines) > 2 {
		lines = lines[:2]
		lines[1] = truncate(lines[1]+" …", m.width)
	}

	for i := range lines {
		lines[i] = truncate(strings.TrimRight(lines[i], " "), m.width)
	}

	return strings.Join(lines, "\n")
}

// listLines renders the tree's lines from up to to (exclusive), one string
// per line of the whole tree (the others empty), the selection marked.
func (m Model) listLines(from, to int) []string {
	if !m.loaded {
		return nil
	}
	if len(m.snap.Worktrees) == 0 {
		return []string{
			"",
			"  No integration worktrees yet.",
			"",
			"  Create one with: git agency worktree create --name <name>",
			"  then start an agent on it: git agency agent start --worktree <name>",
		}
	}

	now := m.snap.Taken
	if now.IsZero() {
		now = m.now()
	}

	cols := columnWidths(m.snap)
	lines := make([]string, m.totalLines())
	for i, it := range m.items {
		if it.line < from || it.line >= to {
			continue
		}

		wt := m.snap.Worktrees[it.wt]
		sel := i == m.cursor
		var text string
		if it.kind == itemWorktree {
			text = worktreeText(wt, m.styles)
		} else {
			last := it.inv == len(wt.Invocations)-1
			text = invocationText(wt.Invocations[it.inv], last, cols, now, m.styles)
		}

		gutter := "  "
		if sel {
			gutter = "> "
		}

		line := truncate(gutter+text, m.width)
		if sel {
			line = m.styles.Selected.Render(ansi.Strip(line))
		}

		lines[it.line] = line
	}

	return lines
}

type widths struct{ runner, mode, status int }

// modeText is a row's MODE: its mode, and "@host" for an agent on a host
// (as agent ls shows it).
func modeText(inv InvocationRow) string {
	if inv.Host != "" {
		return inv.Mode + "@" + inv.Host
	}
	return inv.Mode
}

func columnWidths(s Snapshot) widths {
	w := widths{runner: 6, mode: 8, status: 8}
	for _, wt := range s.Worktrees {
		for _, inv := range wt.Invocations {
			w.runner = max(w.runner, len(inv.Runner))
			w.mode = max(w.mode, len(modeText(inv)))
			w.status = max(w.status, len(inv.Status))
		}
	}

	w.runner = min(w.runner, 12)
	return w
}

func worktreeText(wt WorktreeRow, st *Styles) string {
	var head string
	switch wt.State {
	case "broken":
		return st.Status[StatusBroken].Render(fmt.Sprintf("%s [broken record]", wt.ID))
	case "orphaned":
		return st.Dim.Render("(invocations without a worktree record)")
	case StateRepoGone:
		head = st.Worktree.Render(wt.Name) + " (" + wt.Path + ") [" + wt.State + "]"
	default:
		head = st.Worktree.Render(wt.Name) + " (" + wt.Branch + ") [" + wt.State + "]"
		if wt.RepoName != "" {
			head = st.Dim.Render(wt.RepoName+" ·") + " " + head
		}
	}

	c := wt.Counts()
	var parts []string
	if c.Active > 0 {
		parts = append(parts, fmt.Sprintf("%d active", c.Active))
	}

	if c.Ready > 0 {
		parts = append(parts, fmt.Sprintf("%d ready to land", c.Ready))
	}

	if c.NeedsInput > 0 {
		parts = append(parts, fmt.Sprintf("%d needs input", c.NeedsInput))
	}

	if len(parts) > 0 {
		head += "  " + st.Dim.Render(strings.Join(parts, " · "))
	}

	return head
}

func invocationText(inv InvocationRow, last bool, w widths, now time.Time, st *Styles) string {
	branch := "├── "
	if last {
		branch = "└── "
	}

	if inv.Display == StatusNeedsInput {
		// Unmistakable without colour too: the agent waits for you.
		branch = strings.Replace(branch, "── ", "─▶ ", 1)
	}

	age := "-"
	if t := inv.Age(); !t.IsZero() {
		age = agency.Ago(now.Sub(t))
	}

	status := inv.Status
	if status == "" {
		status = "-"
	}

	s := fmt.Sprintf("%s%-4s  %-*s  %-*s  %-*s  %7s  ", branch, inv.ShortID,
		w.runner, clip(orDash(inv.Runner), w.runner), w.mode, orDash(modeText(inv)), w.status, status, age)
	disp := "[" + inv.Display + "]"
	if inv.QueuePlace > 0 {
		disp = fmt.Sprintf("[%s #%d]", inv.Display, inv.QueuePlace)
	}

	if style, ok := st.Status[inv.Display]; ok {
		disp = style.Render(disp)
	}

	s += disp
	if inv.LandRefused != "" {
		s += " " + st.Status[StatusFailed].Render("⚠ land refuses: "+inv.LandRefused)
	}

	if len(inv.ConflictsWith) > 0 {
		// The forecast's mark, and who it collides with.
		s += " " + st.Status[StatusFailed].Render("⚠ conflicts with "+strings.Join(inv.ConflictsWith, ", ")) +
			st.Dim.Render(" ("+strings.Join(inv.ConflictFiles, ", ")+")")
	}

	if inv.Usage != "" {
		s += "  " + inv.Usage
	}

	if inv.Summary != "" {
		s += "  " + st.Dim.Render(inv.Summary)
	}

	return s
}

func (m Model) pagerView() string {
	p := m.pager
	title := fmt.Sprintf("%s · %s (%s %s)", p.kind, p.inv.ShortID, p.inv.Runner, p.inv.Mode)
	pos := fmt.Sprintf("%3.0f%%", p.vp.ScrollPercent()*100)
	gap := m.width - lipgloss.Width(title) - lipgloss.Width(pos)
	head := m.styles.Title.Render(title)
	if gap > 0 {
		head += strings.Repeat(" ", gap) + m.styles.Dim.Render(pos)
	}

	foot := m.statusLine()
	if m.status == "" && m.confirm == nil {
		foot = m.styles.StatusLine.Render("↑/↓ pgup/pgdn scroll · esc back · q quit")
	}

	return truncate(head, m.width) + "\n" + p.vp.View() + "\n" + truncate(foot, m.width)
}

// ShortHelp and FullHelp make Model a help.KeyMap. The short help follows
// the selection: invocation keys on an invocation, worktree keys otherwise.
func (m Model) ShortHelp() []keyBinding {
	k := m.keys
	if _, inv := m.selection(); inv != nil {
		return []keyBinding{k.Attach, k.Diff, k.Logs, k.Land, k.Discard, k.Stop, k.Kill, k.Help, k.Quit}
	}
	return []keyBinding{k.Up, k.Down, k.Open, k.Shell, k.Help, k.Quit}
}

// FullHelp lists every key in columns.
func (m Model) FullHelp() [][]keyBinding {
	k := m.keys
	return [][]keyBinding{
		{k.Up, k.Down, k.Top, k.Bottom},
		{k.Attach, k.Diff, k.Logs, k.VerifyLog, k.Back},
		{k.Land, k.Apply, k.Discard, k.Stop},
		{k.Kill, k.Open, k.Shell},
		{k.Help, k.Quit},
	}
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n-1] + "…"
}

// truncate cuts a (possibly styled) line to width cells.
func truncate(s string, width int) string {
	if width <= 0 || ansi.StringWidth(s) <= width {
		return s
	}
	return ansi.Truncate(s, width, "…")
}

// Plain renders a snapshot as plain text (no colour, no selection): what
// `watch` prints when stdout is not a terminal.
func Plain(s Snapshot, now time.Time) string {
	st := DefaultStyles() // stripped below

	if len(s.Worktrees) == 0 {
		return "no integration worktrees\n"
	}

	cols := columnWidths(s)
	var b strings.Builder
	repo := ""
	for i, wt := range s.Worktrees {
		if i > 0 {
			b.WriteByte('\n')
		}

		if wt.RepoPath != "" && wt.RepoPath != repo {
			// watch --all-repos: a heading per repository.
			repo = wt.RepoPath
			fmt.Fprintf(&b, "== %s (%s)\n", wt.RepoName, wt.RepoPath)
		}

		b.WriteString(ansi.Strip(worktreeText(wt, &st)))
		b.WriteByte('\n')
		for j, inv := range wt.Invocations {
			b.WriteString(strings.TrimRight(ansi.Strip(invocationText(inv, j == len(wt.Invocations)-1, cols, now, &st)), " "))
			b.WriteByte('\n')
		}
	}

	if s.Warning != "" {
		b.WriteString("\nwarning: " + s.Warning + "\n")
	}

	return b.String()
}
