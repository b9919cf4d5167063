// Command git-sandbox is `git sandbox`: the sandbox-centric front door to
// git-agency, keyed by invocation id.
package main

import (
	"os"

	"github.com/git-agency/git-agency/cli"
)

func main() { os.Exit(cli.MainSandbox(os.Args[1:])) }
