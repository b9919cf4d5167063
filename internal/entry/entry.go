// Package entry holds git-agency's hidden entry points: the commands our
// own processes start git-agency with, never a person. They bypass the
// grammar of cli (quick, silent, fixed exit statuses), and they are the
// one way a front end's program reaches runner and wall without agency:
// cmd/git-agency and the test binary (script_test.go) both register them
// with Main, so cli never imports runner.
package entry

import (
	"io"
	"os"

	"github.com/git-agency/git-agency/runner"
	"github.com/git-agency/git-agency/wall"
)

// Main runs the hidden entry point args[0] names (hook-event, wall-exec,
// remove-retired) and returns its exit status; any other args go to rest
// (cli.MainAgency).
func Main(args []string, rest func([]string) int) int {
	if status, ok := Run(args, os.Stdin, os.Stderr); ok {
		return status
	}
	return rest(args)
}

// Run runs the hidden entry point args[0] names and reports whether there
// was one.
func Run(args []string, stdin io.Reader, stderr io.Writer) (status int, ok bool) {
	if len(args) == 0 {
		return 0, false
	}

	switch args[0] {
	case runner.HookEventCmd:
		return HookEvent(args[1:], stdin), true
	case wall.ExecCmd:
		return wall.Exec(args[1:], stderr), true
	case runner.RemoveRetiredCmd:
		return runner.RemoveRetired(args[1:]), true
	}

	return 0, false
}

// HookEvent is the hidden `hook-event --invocation <id> --out <path>` that
// the hooks injected into a claude run call (see runner.ClaudeHookSettings).
// It must be quick, print nothing (claude reads a hook's stdout) and
// always exit 0 (exit 2 would block the agent's tool call), whatever its
// arguments or input.
func HookEvent(args []string, stdin io.Reader) int {
	out := ""
	for i := 0; i+1 < len(args); i++ {
		if args[i] == "--out" {
			out = args[i+1]
		}
	}
	_ = runner.RecordHookEvent(stdin, out)
	return 0
}
