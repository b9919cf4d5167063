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
	"github.com/git-agency/git-agency/gitcore"
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
	// Repos, when set, are every repository of the data directory (watch
	// --all-repos); App is then the current one, or nil outside any.
	Repos []agency.RepoEntry
}

// Command is the body of `git agency watch`, run by the git-agency-watch
// program: the TUI lives in its own executable so that bubbletea's package
// init, which queries the terminal, never runs for the other commands.
func Command(env Env) error {
	a := env.App
	title := ""
	if a != nil {
		title = repoName(a.Repo.CommonDir)
	}

	actions := &AgencyActions{App: a}
	var loader Loader
	if env.Repos != nil {
		title = "all repositories"
		actions.Apps = map[string]*agency.App{}
		for _, r := range env.Repos {
			if r.App != nil {
				actions.Apps[r.RepoID] = r.App
			}
		}

		loader = NewReposLoader(env.Repos, env.All)
	} else {
		loader = NewLoader(a, env.All)
	}

	// Settings: the current repository's (outside any, the defaults).
	cfg := gitcore.NewConfig(nil)
	if a != nil {
		cfg = a.Config
	}

	interval := env.Interval
	if interval == 0 {
		d, ok := cfg.Duration("agency.watch.interval", DefaultInterval)
		if !ok {
			v, _ := cfg.Get("agency.watch.interval")
			return errs.Config("agency.watch.interval", v, "a duration such as 1s")
		}
		interval = d
	}

	if interval < 100*time.Millisecond {
		interval = 100 * time.Millisecond
	}

	if _, ok := cfg.Duration("agency.stallThreshold", 5*time.Minute); !ok {
		v, _ := cfg.Get("agency.stallThreshold")
		return errs.Config("agency.stallThreshold", v, "a duration such as 5m")
	}

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
		Actions:  actions,
		Interval: interval,
		Title:    title,
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
