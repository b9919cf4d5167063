//go:build !linux

package runner

import (
	"errors"
	"syscall"
)

// errStartUnknown: this platform cannot read a process's start time.
var errStartUnknown = errors.New("process start time unknown on this platform")

// StartTime is unknown without /proc: callers record nil and Alive falls
// back to the pid's liveness.
func StartTime(pid int) (uint64, error) { return 0, errStartUnknown }

// pidAlive asks the kernel with signal 0. EPERM means the process exists
// but belongs to someone else: it is alive. A zombie counts as alive here,
// which errs on the side of never declaring a live agent dead.
func pidAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// procState is pidAlive, the start time being unknown here.
func procState(pid int) (alive bool, start uint64, startErr error) {
	return pidAlive(pid), 0, errStartUnknown
}

// groupHasLive cannot tell zombies apart here: a group that signal 0
// reaches is alive.
func groupHasLive(pgid int) bool { return true }
