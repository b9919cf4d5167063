package watch

import (
	"bytes"
	"context"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/exp/golden"
	"github.com/charmbracelet/x/exp/teatest"
	"github.com/muesli/termenv"
)

func init() {
	lipgloss.SetColorProfile(termenv.Ascii)
	lipgloss.SetHasDarkBackground(true)
}

var t0 = time.Date(2026, 1, 28, 12, 0, 0, 0, time.UTC)

func ago(d time.Duration) time.Time { return t0.Add(-d) }

// mixed is two worktrees with invocations in every display status.
func mixed() Snapshot {
	return Snapshot{Taken: t0, Worktrees: []WorktreeRow{
		{ID: "20260128110000-a3f2", Name: "my-feature", Branch: "agency/my-feature-a3f2", State: "present",
			Invocations: []InvocationRow{
				{ID: "20260128115700-b7c9", ShortID: "b7c9", Runner: "claude", Mode: "headless", Status: "running",
					StartedAt: ago(3 * time.Minute), Display: StatusActive},
				{ID: "20260128114000-d4e5", ShortID: "d4e5", Runner: "codex", Mode: "headed", Status: "finished",
					StartedAt: ago(20 * time.Minute), FinishedAt: ago(10 * time.Minute), Display: StatusReady},
				{ID: "20260128105000-f1a2", ShortID: "f1a2", Runner: "claude", Mode: "headless", Status: "finished",
					StartedAt: ago(70 * time.Minute), FinishedAt: ago(time.Hour), Display: StatusLanded},
				{ID: "20260128104000-0c1d", ShortID: "0c1d", Runner: "sh", Mode: "headless", Status: "failed",
					StartedAt: ago(80 * time.Minute), FinishedAt: ago(79 * time.Minute), Display: StatusFailed, Summary: "exit 2"},
			}},
		{ID: "20260128100000-c8d3", Name: "bugfix-auth", Branch: "agency/bugfix-auth-c8d3", State: "present",
			Invocations: []InvocationRow{
				{ID: "20260128115900-e3a4", ShortID: "e3a4", Runner: "claude", Mode: "headed", Status: "running",
					StartedAt: ago(time.Minute), Display: StatusNeedsInput, TmuxSession: "agency-20260128115900-e3a4"},
				{ID: "20260128101000-9a9b", ShortID: "9a9b", Runner: "codex", Mode: "headless", Status: "running",
					StartedAt: ago(40 * time.Minute), Display: StatusStalled},
				{ID: "20260128100500-5e5f", ShortID: "5e5f", Runner: "claude", Mode: "headless", Status: "finished",
					StartedAt: ago(50 * time.Minute), FinishedAt: ago(45 * time.Minute), Display: StatusDiscarded},
				{ID: "20260128100100-7777", ShortID: "7777", Display: StatusBroken, Summary: "meta.json: unexpected end of JSON input"},
			}},
	}}
}

// fakeLoader serves whatever snapshot the test sets.
type fakeLoader struct {
	mu    sync.Mutex
	snap  Snapshot
	err   error
	calls int
}

func (f *fakeLoader) set(s Snapshot) { f.mu.Lock(); f.snap = s; f.mu.Unlock() }

func (f *fakeLoader) load(context.Context) (Snapshot, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	return f.snap, f.err
}

// fakeActions records calls and answers with canned results.
type fakeActions struct {
	mu      sync.Mutex
	calls   []string
	landErr error
}

func (f *fakeActions) rec(s string) { f.mu.Lock(); f.calls = append(f.calls, s); f.mu.Unlock() }

func (f *fakeActions) Attach(_ context.Context, inv InvocationRow) (*exec.Cmd, error) {
	f.rec("attach " + inv.ShortID)
	return exec.Command("true"), nil
}
func (f *fakeActions) Open(_ context.Context, wt WorktreeRow) (*exec.Cmd, error) {
	f.rec("open " + wt.Name)
	return exec.Command("true"), nil
}
func (f *fakeActions) Shell(_ context.Context, wt WorktreeRow) (*exec.Cmd, error) {
	f.rec("shell " + wt.Name)
	return exec.Command("true"), nil
}
func (f *fakeActions) Diff(_ context.Context, inv InvocationRow) (string, error) {
	f.rec("diff " + inv.ShortID)
	return "diff --git a/hello.txt b/hello.txt\nnew file mode 100644\n--- /dev/null\n+++ b/hello.txt\n@@ -0,0 +1 @@\n+hello\n", nil
}
func (f *fakeActions) Logs(_ context.Context, inv InvocationRow) (string, error) {
	f.rec("logs " + inv.ShortID)
	var b strings.Builder
	for i := 1; i <= 40; i++ {
		b.WriteString(`{"type":"assistant","n":` + itoa(i) + "}\n")
	}
	return b.String(), nil
}
func (f *fakeActions) Land(_ context.Context, inv InvocationRow) (string, error) {
	f.rec("land " + inv.ShortID)
	if f.landErr != nil {
		return "", f.landErr
	}
	return "landed " + inv.ShortID, nil
}
func (f *fakeActions) Discard(_ context.Context, inv InvocationRow) (string, error) {
	f.rec("discard " + inv.ShortID)
	return "discarded " + inv.ShortID, nil
}
func (f *fakeActions) Stop(_ context.Context, inv InvocationRow) (string, error) {
	f.rec("stop " + inv.ShortID)
	return "stopping " + inv.ShortID, nil
}
func (f *fakeActions) Kill(_ context.Context, inv InvocationRow) (string, error) {
	f.rec("kill " + inv.ShortID)
	return "killed " + inv.ShortID, nil
}

func (f *fakeActions) called() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.calls...)
}

func itoa(i int) string {
	if i < 10 {
		return string(rune('0' + i))
	}
	return itoa(i/10) + string(rune('0'+i%10))
}

type harness struct {
	t      *testing.T
	tm     *teatest.TestModel
	loader *fakeLoader
	acts   *fakeActions
}

func start(t *testing.T, snap Snapshot, w, h int) *harness {
	t.Helper()
	l := &fakeLoader{snap: snap}
	a := &fakeActions{}
	m := New(Options{Loader: l.load, Actions: a, Interval: time.Hour, Title: "repo",
		Now: func() time.Time { return t0 }})
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(w, h))
	hs := &harness{t: t, tm: tm, loader: l, acts: a}
	hs.waitFor("every 1h0m0s")
	return hs
}

// waitFor waits until the program's output contains s.
func (h *harness) waitFor(s string) {
	h.t.Helper()
	teatest.WaitFor(h.t, h.tm.Output(), func(b []byte) bool { return bytes.Contains(b, []byte(s)) },
		teatest.WithDuration(5*time.Second), teatest.WithCheckInterval(5*time.Millisecond))
}

func (h *harness) keys(ks ...string) {
	for _, k := range ks {
		switch k {
		case "enter":
			h.tm.Send(tea.KeyMsg{Type: tea.KeyEnter})
		case "esc":
			h.tm.Send(tea.KeyMsg{Type: tea.KeyEsc})
		case "down":
			h.tm.Send(tea.KeyMsg{Type: tea.KeyDown})
		case "up":
			h.tm.Send(tea.KeyMsg{Type: tea.KeyUp})
		default:
			h.tm.Send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(k)})
		}
	}
}

// final quits and returns the final model.
func (h *harness) final() Model {
	h.t.Helper()
	h.tm.Send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("q")})
	return h.tm.FinalModel(h.t, teatest.WithFinalTimeout(5*time.Second)).(Model)
}

// frame checks the final view against testdata/<test>.golden.
func frame(t *testing.T, m Model) {
	t.Helper()
	golden.RequireEqual(t, []byte(m.View()))
}

func TestEmptyRepo(t *testing.T) {
	h := start(t, Snapshot{Taken: t0}, 80, 24)
	m := h.final()
	frame(t, m)
}

func TestMixed(t *testing.T) {
	h := start(t, mixed(), 80, 24)
	m := h.final()
	frame(t, m)
	if m.Selected() != "wt:20260128110000-a3f2" {
		t.Fatalf("selected %q", m.Selected())
	}
}

