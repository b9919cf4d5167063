package cli

import (
	"io"

	"github.com/git-agency/git-agency/runner"
)

// hookEvent is the hidden `hook-event --invocation <id> --out <path>` that
// the hooks injected into a claude run call (see runner.ClaudeHookSettings).
// It bypasses the grammar: it must be quick, print nothing (claude reads a
// hook's stdout) and always exit 0 (exit 2 would block the agent's tool
// call), whatever its arguments or input.
func hookEvent(args []string, stdin io.Reader) int {
	out := ""
	for i := 0; i+1 < len(args); i++ {
		if args[i] == "--out" {
			out = args[i+1]
		}
	}
	_ = runner.RecordHookEvent(stdin, out)
	return 0
}
