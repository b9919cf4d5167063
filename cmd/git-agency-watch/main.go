// Command git-agency-watch is the live terminal view behind `git agency
// watch`, kept in its own program so that the terminal UI library's
// start-up work is paid only by watch.
package main

import (
	"os"

	"github.com/git-agency/git-agency/internal/watchmain"
)

func main() { os.Exit(watchmain.Main(os.Args[1:])) }
