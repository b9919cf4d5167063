package watch

import (
	"context"
	"time"

	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/bubbles/viewport"
)

// DefaultInterval is the refresh interval when agency.watch.interval is
// unset.
const DefaultInterval = time.Second

// Options configure a Model.
type Options struct {
	Loader  Loader
	Actions Actions
	// Interval between refreshes (default DefaultInterval).
	Interval time.Duration
	// Title names what is watched (the repository).
	Title string
	// Now is the clock for ages (default time.Now).
	Now func() time.Time
	// Context bounds every Loader and Actions call (default Background).
	Context context.Context
	// Styles (default DefaultStyles()).
	Styles *Styles
}

type mode int

const (
	modeList mode = iota
	modePager
)

type itemKind int

const (
	itemWorktree itemKind = iota
	itemInvocation
)

// item is one selectable line of the tree.
type item struct {
	kind itemKind
	wt   int // index into snap.Worktrees
	inv  int // index into Invocations (itemInvocation)
	key  string
	line int // line number in the list (groups are separated by a blank line)
}

// confirmation is a pending destructive action waiting for y/n.
type confirmation struct {
	verb   string // "land", "apply" (land --apply), "discard", "kill"
	inv    InvocationRow
	prompt string
	// detail is shown above the prompt (apply: the diffstat).
	detail []string
}

// pager is the diff/logs view of one invocation.
type pager struct {
	kind   string // "diff" or "logs"
	inv    InvocationRow
	vp     viewport.Model
	loaded bool
	busy   bool // a reload is in flight
}

// Model is the watch TUI. It is plain data: the snapshot, the selection and
// the view state. All I/O runs in tea.Cmds built from Options.
type Model struct {
	loader   Loader
	actions  Actions
	interval time.Duration
	title    string
	now      func() time.Time
	ctx      context.Context
	styles   *Styles
	keys     KeyMap
	help     help.Model

	snap    Snapshot
	loaded  bool
	loadErr error
	loading bool
	// reload is set when a refresh was asked for while one was in flight.
	reload bool

	items  []item
	cursor int
	selKey string
	offset int // first visible list line

	width, height int

	mode    mode
	pager   pager
	confirm *confirmation
	// status is the status line; statusErr colours it as an error.
	status    string
	statusErr bool
	// busy names an action in flight ("landing b7c9…").
	busy string
}

// New returns a model; Init starts the first load.
func New(o Options) Model {
	if o.Interval <= 0 {
		o.Interval = DefaultInterval
	}

	if o.Now == nil {
		o.Now = time.Now
	}

	if o.Context == nil {
		o.Context = context.Background()
	}

	if o.Styles == nil {
		s := DefaultStyles()
		o.Styles = &s
	}

	h := help.New()
	h.Styles.ShortKey = o.Styles.HelpKey
	h.Styles.FullKey = o.Styles.HelpKey
	h.Styles.ShortDesc = o.Styles.HelpDesc
	h.Styles.FullDesc = o.Styles.HelpDesc
	h.Styles.ShortSeparator = o.Styles.HelpDesc
	h.Styles.FullSeparator = o.Styles.HelpDesc
	h.Styles.Ellipsis = o.Styles.HelpDesc
	h.ShortSeparator = "  "
	return Model{
		loader: o.Loader, actions: o.Actions, interval: o.Interval, title: o.Title,
		now: o.Now, ctx: o.Context, styles: o.Styles, keys: DefaultKeys(), help: h,
		width: 80, height: 24,
	}
}

// Snapshot returns the current snapshot (tests).
func (m Model) Snapshot() Snapshot { return m.snap }

// Selected returns the key of the selected item: "wt:<id>" or "inv:<id>".
func (m Model) Selected() string { return m.selKey }

// Status returns the status line text.
func (m Model) Status() string { return m.status }

// rebuild recomputes the selectable items from the snapshot and puts the
// cursor back on the item it was on (by id), or the nearest one.
func (m *Model) rebuild() {
	m.items = m.items[:0]
	line := 0
	for wi, wt := range m.snap.Worktrees {
		if wi > 0 {
			line++ // blank line between groups
		}

		m.items = append(m.items, item{kind: itemWorktree, wt: wi, key: "wt:" + wt.ID, line: line})
		line++
		for ii, inv := range wt.Invocations {
			m.items = append(m.items, item{kind: itemInvocation, wt: wi, inv: ii, key: "inv:" + inv.ID, line: line})
			line++
		}
	}

	found := false
	for i, it := range m.items {
		if it.key == m.selKey {
			m.cursor, found = i, true
			break
		}
	}

	if !found {
		if m.cursor >= len(m.items) {
			m.cursor = len(m.items) - 1
		}
		if m.cursor < 0 {
			m.cursor = 0
		}
	}

	if len(m.items) > 0 {
		m.selKey = m.items[m.cursor].key
	} else {
		m.selKey = ""
	}

	m.scrollToCursor()
}

// totalLines is the number of lines of the list.
func (m Model) totalLines() int {
	if len(m.items) == 0 {
		return 0
	}
	return m.items[len(m.items)-1].line + 1
}

// scrollToCursor keeps the selected line inside the visible list area.
func (m *Model) scrollToCursor() {
	h := m.listHeight()
	if h <= 0 {
		m.offset = 0
		return
	}

	if len(m.items) == 0 {
		m.offset = 0
		return
	}

	line := m.items[m.cursor].line
	if m.cursor == 0 {
		line = 0
	}

	if line < m.offset {
		m.offset = line
	}

	if line >= m.offset+h {
		m.offset = line - h + 1
	}

	if max := m.totalLines() - h; m.offset > max {
		m.offset = max
	}

	if m.offset < 0 {
		m.offset = 0
	}
}

func (m *Model) move(delta int) {
	if len(m.items) == 0 {
		return
	}

	m.cursor += delta
	if m.cursor < 0 {
		m.cursor = 0
	}

	if m.cursor >= len(m.items) {
		m.cursor = len(m.items) - 1
	}

	m.selKey = m.items[m.cursor].key
	m.scrollToCursor()
}

// selection returns the selected worktree and, if an invocation is
// selected, that invocation.
func (m Model) selection() (wt *WorktreeRow, inv *InvocationRow) {
	if len(m.items) == 0 || m.cursor >= len(m.items) {
		return nil, nil
	}

	it := m.items[m.cursor]
	w := &m.snap.Worktrees[it.wt]
	if it.kind == itemInvocation {
		return w, &w.Invocations[it.inv]
	}

	return w, nil
}

func (m *Model) setStatus(s string, isErr bool) {
	m.status, m.statusErr = s, isErr
}
