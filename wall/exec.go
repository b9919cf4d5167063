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
	"golang.org/x/sys/unix"
)

// ExecCmd is the hidden subcommand that runs first inside the wall:
// `wall-exec -- argv`. bubblewrap was started with the stop signals
// ignored (see Command); the agent must have them back.
const ExecCmd = "wall-exec"

// readyFDFlag names the descriptor Exec writes a byte to once the
// agent's signals are back to their defaults.
const readyFDFlag = "--ready-fd"

// maxProcsFlag sets the agent's process limit (RLIMIT_NPROC); noTTYFlag
// gives up the controlling terminal.
const (
	maxProcsFlag = "--max-procs"
	noTTYFlag    = "--no-tty"
)

// execOptions are Exec's flags, before the agent's argv.
type execOptions struct {
	ready, maxProcs int
	noTTY           bool
}

// parseExecFlags reads Exec's flags off args and returns the rest.
func parseExecFlags(args []string) (execOptions, []string) {
	o := execOptions{ready: -1}
	for len(args) > 0 {
		switch {
		case args[0] == noTTYFlag:
			o.noTTY, args = true, args[1:]
		case len(args) > 1 && args[0] == readyFDFlag:
			o.ready, _ = strconv.Atoi(args[1])
			args = args[2:]
		case len(args) > 1 && args[0] == maxProcsFlag:
			o.maxProcs, _ = strconv.Atoi(args[1])
			args = args[2:]
		default:
			return o, args
		}
	}

	return o, args
}

// confine applies the options that hold for the agent and everything it
// starts: no controlling terminal (TIOCSTI then fails on any terminal
// descriptor it inherited, and /dev/tty cannot be opened; bubblewrap's
// --new-session would do the same but move the agent out of the process
// group a stop signals), and the process limit (counted per user in the
// wall's own user namespace, so the agent's processes only; the kernel
// exempts root's, uid 0 outside: for root the limit is a pids cgroup,
// see pids.go).
func (o execOptions) confine() error {
	if o.noTTY {
		if f, err := os.OpenFile("/dev/tty", os.O_RDWR|syscall.O_NOCTTY, 0); err == nil {
			unix.IoctlSetInt(int(f.Fd()), unix.TIOCNOTTY, 0)
			f.Close()
		}
	}

	if o.maxProcs > 0 {
		lim := &unix.Rlimit{Cur: uint64(o.maxProcs), Max: uint64(o.maxProcs)}
		if err := unix.Setrlimit(unix.RLIMIT_NPROC, lim); err != nil {
			return fmt.Errorf("process limit: %v", err)
		}
	}

	return nil
}

// Exec gives SIGINT, SIGTERM and SIGHUP their default actions back,
// confines itself (see confine), and replaces itself with args (after a
// leading "--"). It returns only when that fails: 127 when the program
// is not found, 126 otherwise.
func Exec(args []string, stderr io.Writer) int {
	o, args := parseExecFlags(args)
	if err := o.confine(); err != nil {
		fmt.Fprintf(stderr, "wall-exec: %v\n", err)
		return 126
	}

	ready := o.ready

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

	if err := closeInherited(); err != nil {
		fmt.Fprintf(stderr, "wall-exec: %v\n", err)
		return 126
	}
	err := subproc.NewTerminal(args, "", nil).Exec()
	fmt.Fprintf(stderr, "%s: %v\n", args[0], err)
	if errors.Is(err, exec.ErrNotFound) || errors.Is(err, fs.ErrNotExist) {
		return 127
	}

	return 126
}

// closeInherited marks every descriptor above stderr close-on-exec, so
// the agent inherits none. Go's exec closes only the descriptors Go
// opened; one the user's shell left open (exec 7>>~/.bashrc, a
// terminal's, a wrapper's pipe) passes through agent start, the
// supervisor and bubblewrap, and would let the agent write past the wall.
// When they cannot be listed the agent does not start.
func closeInherited() error {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return fmt.Errorf("closing inherited descriptors: %w", err)
	}
	for _, e := range ents {
		if fd, err := strconv.Atoi(e.Name()); err == nil && fd > 2 {
			syscall.CloseOnExec(fd)
		}
	}
	return nil
}
