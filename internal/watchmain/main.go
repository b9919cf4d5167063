// Package watchmain is the git-agency-watch program: cli parses `git agency
// watch`'s flags and prints errors, watch runs the TUI. It is the one place
// that knows both, so watch never imports cli.
package watchmain

import (
	"github.com/git-agency/git-agency/cli"
	"github.com/git-agency/git-agency/watch"
)

// Main runs git-agency-watch with args (without the program name) and
// returns its exit status.
func Main(args []string) int { return cli.MainWatch(args, run) }

func run(env *cli.Env, c *cli.WatchCmd) error {
	a, repos, err := cli.WatchRepos(env, c)
	if err != nil {
		return err
	}
	return watch.Command(watch.Env{
		Ctx: env.Ctx, App: a, Stdout: env.Stdout, Stderr: env.Stderr,
		StdoutTTY: env.StdoutTTY, Color: env.Color(), Interval: c.Interval, All: c.All, Repos: repos,
	})
}
