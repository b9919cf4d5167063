package watch

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/mattn/go-isatty"
	"github.com/muesli/termenv"

	"github.com/git-agency/git-agency/agency"
	"github.com/git-agency/git-agency/cli"
	"github.com/git-agency/git-agency/errs"
	"github.com/git-agency/git-agency/gitcore"
)

// Command is the body of `git agency watch`, run by the git-agency-watch
// program (cli.MainWatch): the TUI lives in its own executable so that
// bubbletea's package init, which queries the terminal, never runs for
// the other commands.
func Command(env *cli.Env, c *cli.WatchCmd) error {
	a, err := env.App()
	if err != nil {
		return err
	}
	interval := c.Interval
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
	loader := NewLoader(a, c.All)

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
	if !env.Color() {
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

// The watch view's L, D and diff keys run the same use cases.
func init() {
	LandFunc = func(ctx context.Context, a *agency.App, inv string) (string, error) {
		res, err := a.Land(ctx, agency.LandOptions{Query: inv})
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("landed %s: %s onto %s, HEAD %s", res.InvocationID, commitCount(len(res.Commits)), res.Branch, shortSHA(res.ResultHead)), nil
	}
	DiscardFunc = func(ctx context.Context, a *agency.App, inv string) (string, error) {
		res, err := a.Discard(ctx, inv)
		if err != nil {
			return "", err
		}
		return "discarded " + res.Invocation.InvocationID, nil
	}
	DiffFunc = func(ctx context.Context, a *agency.App, inv string) (string, error) {
		d, err := a.Diff(ctx, inv, gitcore.DiffOptions{})
		if err != nil {
			return "", err
		}
		var b strings.Builder
		fmt.Fprintf(&b, "## commits: %d\n%s\n%s\n", len(d.Commits), d.Log, d.Patch)
		if len(d.UncommittedFiles) > 0 {
			fmt.Fprintf(&b, "## uncommitted changes in the sandbox: %d file(s)\n%s", len(d.UncommittedFiles), d.Uncommitted)
		}
		if len(d.Denied) > 0 {
			fmt.Fprintf(&b, "## left out, denylisted untracked files: %s\n", strings.Join(d.Denied, " "))
		}
		return b.String(), nil
	}
}

func commitCount(n int) string {
	if n == 1 {
		return "1 commit"
	}
	return fmt.Sprintf("%d commits", n)
}

func shortSHA(s string) string {
	if len(s) > 12 {
		return s[:12]
	}
	return s
}
