// Command git-agency is `git agency`: integration worktrees, agents in
// sandboxes, checkpoints, landing and watch.
package main

import (
	"os"

	"github.com/git-agency/git-agency/cli"
	"github.com/git-agency/git-agency/internal/entry"
)

func main() { os.Exit(entry.Main(os.Args[1:], cli.MainAgency)) }
