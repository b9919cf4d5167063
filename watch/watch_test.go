package watch

import (
	"bytes"
	"context"
	"errors"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/exp/golden"
	"github.com/charmbracelet/x/exp/teatest"
	"github.com/muesli/termenv"

	"github.com/git-agency/git-agency/agency"
	"github.com/git-agency/git-agency/errs"
	"github.com/git-agency/git-agency/internal/subproc"
	"github.com/git-agency/git-agency/internal/testenv"
	"github.com/git-agency/git-agency/store"
)

// TestMain renders in plain ASCII on a dark background, whatever the
// terminal running the tests is (no init(): the house has none).
func TestMain(m *testing.M) {
	lipgloss.SetColorProfile(termenv.Ascii)
	lipgloss.SetHasDarkBackground(true)
	os.Exit(testenv.Main(m))
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

func (f *fakeActions) Attach(_ context.Context, inv InvocationRow) (*subproc.Terminal, error) {
	f.rec("attach " + inv.ShortID)
	return subproc.NewTerminal([]string{"true"}, "", nil), nil
}
func (f *fakeActions) Open(_ context.Context, wt WorktreeRow) (*subproc.Terminal, error) {
	f.rec("open " + wt.Name)
	return subproc.NewTerminal([]string{"true"}, "", nil), nil
}
func (f *fakeActions) Shell(_ context.Context, wt WorktreeRow) (*subproc.Terminal, error) {
	f.rec("shell " + wt.Name)
	return subproc.NewTerminal([]string{"true"}, "", nil), nil
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
func (f *fakeActions) VerifyLog(_ context.Context, inv InvocationRow) (string, error) {
	f.rec("verify " + inv.ID)
	return "verify log of " + inv.ID + "\n", nil
}
func (f *fakeActions) Land(_ context.Context, inv InvocationRow) (string, error) {
	f.rec("land " + inv.ShortID)
	if f.landErr != nil {
		return "", f.landErr
	}
	return "landed " + inv.ShortID, nil
}
func (f *fakeActions) ApplyStat(_ context.Context, inv InvocationRow) ([]string, error) {
	f.rec("applystat " + inv.ShortID)
	return []string{" hello.txt | 1 +", " main.go   | 4 ++--", " 2 files changed, 3 insertions(+), 2 deletions(-)"}, nil
}
func (f *fakeActions) LandApply(_ context.Context, inv InvocationRow) (string, error) {
	f.rec("land --apply " + inv.ShortID)
	return "landed " + inv.ShortID + " with its uncommitted work", nil
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

func TestSelectionStaysAcrossRefresh(t *testing.T) {
	h := start(t, mixed(), 80, 24)
	h.keys("j", "j", "down") // my-feature > b7c9 > d4e5 > f1a2
	h.waitFor("f1a2  claude  headless  finished   1h ago  [landed]")
	// A new invocation appears above the selection, another worktree first.
	s := mixed()
	wt := &s.Worktrees[0]
	wt.Invocations = append([]InvocationRow{{ID: "20260128115950-aaaa", ShortID: "aaaa", Runner: "claude",
		Mode: "headless", Status: "starting", StartedAt: ago(10 * time.Second), Display: StatusActive}}, wt.Invocations...)
	s.Worktrees = append([]WorktreeRow{{ID: "20260128090000-0001", Name: "zeta", Branch: "agency/zeta-0001", State: "present"}}, s.Worktrees...)
	h.loader.set(s)
	h.tm.Send(tickMsg(t0))
	h.waitFor("aaaa")
	m := h.final()
	if m.Selected() != "inv:20260128105000-f1a2" {
		t.Fatalf("selection moved to %q", m.Selected())
	}
	frame(t, m)
}

func TestSelectionWhenItemVanishes(t *testing.T) {
	h := start(t, mixed(), 80, 24)
	h.keys("G") // the broken record, last line
	s := mixed()
	s.Worktrees[1].Invocations = s.Worktrees[1].Invocations[:3]
	h.loader.set(s)
	h.tm.Send(tickMsg(t0))
	h.waitFor("> └── 5e5f")
	m := h.final()
	if m.Selected() != "inv:20260128100500-5e5f" {
		t.Fatalf("selected %q, want the new last item", m.Selected())
	}
}

func TestDiffView(t *testing.T) {
	h := start(t, mixed(), 80, 24)
	h.keys("j", "j", "d")
	h.waitFor("+hello")
	m := h.final()
	frame(t, m)
	if got := h.acts.called(); len(got) != 1 || got[0] != "diff d4e5" {
		t.Fatalf("calls %v", got)
	}
}

func TestLogsViewAndBack(t *testing.T) {
	h := start(t, mixed(), 80, 24)
	h.keys("j", "l")
	h.waitFor(`"n":40`)
	h.keys("up", "up") // scroll back a little
	h.waitFor(`"n":18`)
	h.keys("esc")
	h.waitFor("every 1h0m0s")
	m := h.final()
	if m.mode != modeList || m.Selected() != "inv:20260128115700-b7c9" {
		t.Fatalf("after esc: mode %v selected %q", m.mode, m.Selected())
	}
}

func TestLogsViewFrame(t *testing.T) {
	h := start(t, mixed(), 80, 24)
	h.keys("j", "l")
	h.waitFor(`"n":40`)
	frame(t, h.final())
}

// v shows the selected invocation's verify log in the pager.
func TestVerifyLogView(t *testing.T) {
	h := start(t, mixed(), 80, 24)
	h.keys("j", "v")
	h.waitFor("verify log of 20260128115700-b7c9")
	h.keys("esc")
	h.waitFor("every 1h0m0s")
}

func TestHelpView(t *testing.T) {
	h := start(t, mixed(), 80, 24)
	h.keys("j", "?")
	h.waitFor("bottom")
	frame(t, h.final())
}

func TestLandConflict(t *testing.T) {
	h := start(t, mixed(), 80, 24)
	h.acts.landErr = &errs.Error{Code: errs.ELandConflict, Msg: `landing d4e5 on "my-feature" conflicts`,
		Detail: []string{"hello.txt"}, Hint: "resolve in the sandbox, or discard it"}
	h.keys("j", "j", "L")
	h.waitFor("land d4e5 (codex) into my-feature? [y/n]")
	h.keys("y")
	h.waitFor("E_LAND_CONFLICT")
	m := h.final()
	frame(t, m)
	if got := h.acts.called(); len(got) != 1 || got[0] != "land d4e5" {
		t.Fatalf("calls %v", got)
	}
}

// A row whose work is uncommitted lands only with --apply: L asks for that,
// showing the diffstat of what it would take; y lands with --apply.
func TestLandApply(t *testing.T) {
	s := mixed()
	s.Worktrees[0].Invocations[1].Display = StatusReadyApply
	h := start(t, s, 80, 24)
	h.keys("j", "j", "L")
	h.waitFor("with its uncommitted work (--apply)? [y/n]")
	h.tm.Send(tea.KeyMsg{Type: tea.KeyCtrlC})
	m := h.tm.FinalModel(t, teatest.WithFinalTimeout(5*time.Second)).(Model)
	frame(t, m)
	if got := h.acts.called(); strings.Join(got, ",") != "applystat d4e5" {
		t.Fatalf("calls %v", got)
	}

	// A on any row asks the same; y lands with --apply.
	h = start(t, mixed(), 80, 24)
	h.keys("j", "j", "A")
	h.waitFor("2 files changed")
	h.keys("y")
	h.waitFor("landed d4e5 with its uncommitted work")
	h.final()
	want := "applystat d4e5,land --apply d4e5"
	if got := h.acts.called(); strings.Join(got, ",") != want {
		t.Fatalf("calls %v, want %s", got, want)
	}
}

func TestConfirmCancel(t *testing.T) {
	h := start(t, mixed(), 80, 24)
	h.keys("j", "j", "D")
	h.waitFor("discard d4e5 (codex) and delete its sandbox? [y/n]")
	h.keys("n")
	h.waitFor("discard cancelled")
	h.keys("k")
	h.waitFor("kill d4e5 (codex)? [y/n]")
	h.keys("y")
	h.waitFor("killed d4e5")
	h.keys("s")
	h.waitFor("stopping d4e5")
	h.final()
	want := []string{"kill d4e5", "stop d4e5"}
	if got := h.acts.called(); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("calls %v, want %v", got, want)
	}
}

func TestExecActions(t *testing.T) {
	h := start(t, mixed(), 80, 24)
	h.keys("o")
	h.waitFor("back from editor")
	h.keys("S")
	h.waitFor("back from shell")
	h.keys("j", "j", "enter") // d4e5 is headed
	h.waitFor("back from attach")
	h.final()
	want := []string{"open my-feature", "shell my-feature", "attach d4e5"}
	if got := h.acts.called(); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("calls %v, want %v", got, want)
	}
}

func TestActionsNeedAnInvocation(t *testing.T) {
	h := start(t, mixed(), 80, 24)
	h.keys("L")
	h.waitFor("land: select an invocation")
	h.keys("G", "d")
	h.waitFor("has a broken record")
	h.final()
	if got := h.acts.called(); len(got) != 0 {
		t.Fatalf("calls %v", got)
	}
}

func TestSmallAndResize(t *testing.T) {
	h := start(t, mixed(), 80, 24)
	h.tm.Send(tea.WindowSizeMsg{Width: 50, Height: 8})
	h.keys("G")
	m := h.final()
	frame(t, m)
	for i, l := range strings.Split(m.View(), "\n") {
		if w := lipgloss.Width(l); w > 50 {
			t.Errorf("line %d is %d wide: %q", i, w, l)
		}
	}
	if n := strings.Count(m.View(), "\n") + 1; n != 8 {
		t.Errorf("%d lines, want 8", n)
	}
}

func TestLoadErrorKeepsLastSnapshot(t *testing.T) {
	h := start(t, mixed(), 80, 24)
	h.loader.mu.Lock()
	h.loader.err = errors.New("scan: permission denied")
	h.loader.mu.Unlock()
	h.tm.Send(tickMsg(t0))
	h.waitFor("refresh failed: scan: permission denied")
	m := h.final()
	if len(m.Snapshot().Worktrees) != 2 {
		t.Fatal("lost the last snapshot")
	}
}

func TestPanickingLoaderDoesNotCrash(t *testing.T) {
	m := New(Options{Loader: func(context.Context) (Snapshot, error) { panic("boom") }, Interval: time.Hour})
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(80, 24))
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return bytes.Contains(b, []byte("boom")) },
		teatest.WithDuration(5*time.Second))
	tm.Send(tea.KeyMsg{Type: tea.KeyCtrlC})
	tm.WaitFinished(t, teatest.WithFinalTimeout(5*time.Second))
}

func TestPlain(t *testing.T) {
	golden.RequireEqual(t, []byte(Plain(mixed(), t0)))
	if got := Plain(Snapshot{}, t0); got != "no integration worktrees\n" {
		t.Fatalf("empty: %q", got)
	}
}

func TestRunesTypedTogether(t *testing.T) {
	h := start(t, mixed(), 80, 24)
	h.tm.Send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("jjd")})
	h.waitFor("+hello")
	h.final()
	if got := h.acts.called(); len(got) != 1 || got[0] != "diff d4e5" {
		t.Fatalf("calls %v", got)
	}
}

// A kept sandbox of a removed worktree is neither active nor ready to land.
func TestCountsWorktreeRemoved(t *testing.T) {
	w := WorktreeRow{Invocations: []InvocationRow{
		{Display: StatusWorktreeRemoved}, {Display: StatusReady}, {Display: StatusActive},
	}}
	if c := w.Counts(); c != (Counts{Active: 1, Ready: 1}) {
		t.Errorf("Counts = %+v", c)
	}
}

// TestPlainForecastQueueRepos: the forecast's mark and partners, a queued
// row's place, and --all-repos headings and prefixes.
func TestPlainForecastQueueRepos(t *testing.T) {
	s := Snapshot{Taken: t0, Worktrees: []WorktreeRow{
		{ID: "20260128110000-a3f2", Name: "feat", Branch: "agency/feat-a3f2", State: "present",
			RepoID: "r1", RepoName: "api", RepoPath: "/src/api",
			Invocations: []InvocationRow{
				{ID: "20260128115700-b7c9", ShortID: "b7c9", Runner: "sh", Mode: "headless", Status: "finished",
					StartedAt: ago(3 * time.Minute), FinishedAt: ago(time.Minute), Display: StatusReady,
					ConflictsWith: []string{"d4e5", "integration"}, ConflictFiles: []string{"a.txt"}},
				{ID: "20260128115800-0001", ShortID: "0001", Runner: "sh", Mode: "headless", Status: "queued",
					StartedAt: ago(time.Minute), Display: "queued", QueuePlace: 2},
			}},
		{ID: "x", Name: "web", State: StateRepoGone, Path: "/src/web", RepoID: "r2", RepoName: "web", RepoPath: "/src/web"},
	}}
	got := Plain(s, t0)
	for _, want := range []string{
		"== api (/src/api)\napi · feat (agency/feat-a3f2) [present]",
		"[ready to land] ⚠ conflicts with d4e5, integration (a.txt)",
		"[queued #2]",
		"== web (/src/web)\nweb (/src/web) [repository gone]",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("Plain lacks %q:\n%s", want, got)
		}
	}
}

// A conversation's turns (after agent send) and cost show on its row, as
// agent show counts them.
func TestPlainUsage(t *testing.T) {
	cost := 0.0004
	rec := &store.InvocationRecord{InvocationID: "20260128115700-b7c9", Runner: "claude", Mode: "headless",
		Status: "finished", Turns: 2, Usage: &store.Usage{Turns: 2, InputTokens: 30, OutputTokens: 15, CostUSD: &cost}}
	row := invocationRow(agency.InvocationView{ID: rec.InvocationID, Record: rec, Display: StatusReady})
	if row.Usage != "2 turns · $0.0004" {
		t.Fatalf("usage %q", row.Usage)
	}
	s := Snapshot{Taken: t0, Worktrees: []WorktreeRow{{ID: "w", Name: "feat", State: "present", Invocations: []InvocationRow{row}}}}
	if got := Plain(s, t0); !strings.Contains(got, "[ready to land]  2 turns · $0.0004") {
		t.Errorf("Plain lacks the usage:\n%s", got)
	}
	rec.Turns, rec.Usage = 1, nil
	if row := invocationRow(agency.InvocationView{ID: rec.InvocationID, Record: rec}); row.Usage != "" {
		t.Errorf("one turn, no cost: usage %q", row.Usage)
	}
}

// TestSelectedConflictInStatusLine: on a narrow screen the row's mark is
// cut off; selecting the row names the partners and files in full.
func TestSelectedConflictInStatusLine(t *testing.T) {
	snap := Snapshot{Taken: t0, Worktrees: []WorktreeRow{
		{ID: "20260128110000-a3f2", Name: "feat", Branch: "agency/feat-a3f2", State: "present",
			Invocations: []InvocationRow{
				{ID: "20260128115700-b7c9", ShortID: "b7c9", Runner: "sh", Mode: "headless", Status: "finished",
					StartedAt: ago(3 * time.Minute), FinishedAt: ago(time.Minute), Display: StatusReady,
					ConflictsWith: []string{"d4e5"}, ConflictFiles: []string{"src/a.go", "src/b.go"}},
			}},
	}}
	h := start(t, snap, 60, 12)
	h.tm.Send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("j")})
	h.waitFor("b7c9 would conflict with d4e5, in src/a.go, src/b.go")
	h.final()
}
