// Command git-agency is `git agency`: integration worktrees, agents in
// sandboxes, checkpoints, landing and watch.
package main

import (
	"os"

	"github.com/git-agency/git-agency/cli"
)

func main() { os.Exit(cli.MainAgency(os.Args[1:])) }
