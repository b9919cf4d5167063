package cli

import (
	"errors"
	"os"
	"path/filepath"
	"time"

	"github.com/alecthomas/kong"

	"github.com/git-agency/git-agency/agency"
	"github.com/git-agency/git-agency/errs"
	"github.com/git-agency/git-agency/internal/subproc"
)

// WatchProgram is the executable that holds the watch TUI, installed beside
// git-agency.
const WatchProgram = "git-agency-watch"

// WatchCmd is `git agency watch`. The TUI is a separate program
// (git-agency-watch): linking bubbletea makes every command query the
// terminal at start-up (and wait up to 5s for a terminal that does not
// answer), so only watch pays for it.
type WatchCmd struct {
	Interval time.Duration `help:"Refresh interval (default: agency.watch.interval, else 1s)."`
	All      bool          `help:"Include archived worktrees."`
	AllReposFlag
}

func (c *WatchCmd) Run(env *Env) error {
	exe := watchExe()
	if exe == "" {
		return errs.New(errs.EInternal, "reinstall with 'make install'; it installs "+WatchProgram+" beside git-agency",
			"%s is not installed", WatchProgram)
	}

	argv := []string{WatchProgram}
	if c.Interval != 0 {
		argv = append(argv, "--interval", c.Interval.String())
	}
	if c.All {
		argv = append(argv, "--all")
	}
	if c.AllRepos {
		argv = append(argv, "--all-repos")
	}

	// The watch program acts on the same repository as we do: it keeps our
	// environment (GIT_DIR and all) as it is.
	argv[0] = exe
	cmd := subproc.NewTerminal(argv, env.Dir, nil)
	if env.Stdin == os.Stdin && env.Stdout == os.Stdout && env.Stderr == os.Stderr {
		// Hand the terminal over: the watch program replaces this process
		// (in the directory --repo named, if any).
		if err := os.Chdir(env.Dir); err != nil {
			return errs.IO("chdir", env.Dir, err)
		}
		err := cmd.Exec()
		return errs.Wrap(errs.EInternal, err, "", "cannot run %s", exe)
	}

	cmd.SetStdio(env.Stdin, env.Stdout, env.Stderr)

	if err := cmd.Run(); err != nil {
		var ee *subproc.ExitError
		if errors.As(err, &ee) {
			return &ExitError{Code: ee.Code}
		}
		return errs.Wrap(errs.EInternal, err, "", "cannot run %s", exe)
	}

	return nil
}

// watchExe finds git-agency-watch beside this program, else on PATH.
func watchExe() string {
	if self := agency.SelfExe(); self != "" {
		p := filepath.Join(filepath.Dir(self), WatchProgram)
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
			return p
		}
	}
	if p, err := subproc.LookPath(WatchProgram); err == nil {
		return p
	}
	return ""
}

// MainWatch runs the git-agency-watch program: it parses `git agency
// watch`'s flags and calls run (internal/watchmain hands it to
// watch.Command) with the usual Env and error
// printing.
func MainWatch(args []string, run func(*Env, *WatchCmd) error) int {
	g := &watchGrammar{run: run}
	return Main("git agency watch", g, args)
}

type watchGrammar struct {
	Version kong.VersionFlag `help:"Print the version and exit."`
	RepoFlag
	Interval time.Duration `help:"Refresh interval (default: agency.watch.interval, else 1s)."`
	All      bool          `help:"Include archived worktrees."`
	AllReposFlag

	run func(*Env, *WatchCmd) error `kong:"-"`
}

// Run is the grammar's only command.
func (g *watchGrammar) Run(env *Env) error {
	return g.run(env, &WatchCmd{Interval: g.Interval, All: g.All, AllReposFlag: g.AllReposFlag})
}

// WatchRepos opens what a watch shows: the current repository, or with
// --all-repos every repository of the data directory (the current one may
// then be nil, outside any repository).
func WatchRepos(env *Env, c *WatchCmd) (*agency.App, []agency.RepoEntry, error) {
	if !c.AllRepos {
		a, err := env.App()
		return a, nil, err
	}

	repos, err := agency.AllRepos(env.Ctx, env.Dir, env.Runner)
	if err != nil {
		return nil, nil, err
	}
	if repos == nil {
		repos = []agency.RepoEntry{}
	}

	a, _ := env.App()
	return a, repos, nil
}

func (*WatchCmd) longLived() {}
