package watch

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/mattn/go-isatty"
	"github.com/muesli/termenv"

	"github.com/git-agency/git-agency/agency"
	"github.com/git-agency/git-agency/errs"
)

// Env is what the git-agency-watch program hands Command: the parsed
// flags, the streams, and the repository (internal/watchmain builds it from
// cli's Env, so watch never imports cli).
type Env struct {
	Ctx       context.Context
	App       *agency.App
	Stdout    io.Writer
	Stderr    io.Writer
	StdoutTTY bool
	// Color tells whether colour may be used.
	Color    bool
	Interval time.Duration
	All      bool
}

// Command is the body of `git agency watch`, run by the git-agency-watch
// program: the TUI lives in its own executable so that bubbletea's package
// init, which queries the terminal, never runs for the other commands.
func Command(env Env) error {
	a := env.App
	interval := env.Interval
	if interval == 0 {
		d, ok := a.Config.Duration("agency.watch.interval", DefaultInterval)
		if !ok {
			v, _ := a.Config.Get("agency.watch.interval")
			return errs.Config("agency.watch.interval", v, "a duration such as 1s")
		}
		interval = d
	}
	if interval < 100*time.Millisecond {
		interval = 100 * time.Millisecond
	}
	if _, ok := a.Config.Duration("agency.stallThreshold", 5*time.Minute); !ok {
		v, _ := a.Config.Get("agency.stallThreshold")
		return errs.Config("agency.stallThreshold", v, "a duration such as 5m")
	}
	loader := NewLoader(a, env.All)

	// Without a terminal: one plain snapshot of the same tree.
	if !env.StdoutTTY {
		snap, err := loader(env.Ctx)
		if err != nil {
			return err
		}
		fmt.Fprint(env.Stdout, Plain(snap, snap.Taken))
		return nil
	}

	// The TUI goes to stderr (data to stdout, the TUI to stderr), or to
	// stdout when stderr is redirected.
	out := os.Stderr
	if f, ok := env.Stderr.(*os.File); !ok || !isatty.IsTerminal(f.Fd()) {
		out = os.Stdout
	}
	r := lipgloss.NewRenderer(out)
	if !env.Color {
		r.SetColorProfile(termenv.Ascii)
	}
	r.SetHasDarkBackground(true)
	lipgloss.SetDefaultRenderer(r)
	styles := NewStyles(r)

	m := New(Options{
		Loader:   loader,
		Actions:  &AgencyActions{App: a},
		Interval: interval,
		Title:    repoName(a.Repo.CommonDir),
		Context:  env.Ctx,
		Styles:   &styles,
	})
	p := tea.NewProgram(m, tea.WithOutput(out), tea.WithAltScreen(), tea.WithContext(env.Ctx))
	if _, err := p.Run(); err != nil && env.Ctx.Err() == nil {
		return errs.New(errs.EInternal, "", "watch: %v", err)
	}
	return nil
}

// repoName is the repository's directory name (the parent of .git).
func repoName(commonDir string) string {
	if filepath.Base(commonDir) == ".git" {
		return filepath.Base(filepath.Dir(commonDir))
	}
	return filepath.Base(commonDir)
}
