package wall

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"syscall"

	"github.com/git-agency/git-agency/internal/subproc"
)

// ExecCmd is the hidden subcommand that runs first inside the wall:
// `wall-exec -- argv`. bubblewrap was started with the stop signals
// ignored (see Command); the agent must have them back.
const ExecCmd = "wall-exec"

// readyFDFlag names the descriptor Exec writes a byte to once the
// agent's signals are back to their defaults.
const readyFDFlag = "--ready-fd"

// Exec gives SIGINT, SIGTERM and SIGHUP their default actions back
// and replaces itself with args (after a leading "--"). It returns only
// when that fails: 127 when the program is not found, 126 otherwise.
func Exec(args []string, stderr io.Writer) int {
	ready := -1
	if len(args) > 1 && args[0] == readyFDFlag {
		ready, _ = strconv.Atoi(args[1])
		args = args[2:]
	}
	if len(args) > 0 && args[0] == "--" {
		args = args[1:]
	}
	if len(args) == 0 {
		fmt.Fprintln(stderr, "wall-exec: no command")
		return 2
	}
	// A handled signal is reset to its default by exec; Notify installs
	// the handler even for a signal ignored when this program started.
	signal.Notify(make(chan os.Signal, 1), syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	if ready > 2 {
		// The supervisor records the agent as running (and so lets a stop
		// signal it) only from now on: a signal sent before would have
		// been ignored.
		f := os.NewFile(uintptr(ready), "ready")
		f.Write([]byte{1})
		f.Close()
	}
	err := subproc.NewTerminal(args, "", nil).Exec()
	fmt.Fprintf(stderr, "%s: %v\n", args[0], err)
	if errors.Is(err, exec.ErrNotFound) || errors.Is(err, fs.ErrNotExist) {
		return 127
	}
	return 126
}
