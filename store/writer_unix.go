//go:build unix

package store

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// pidExists tells whether a process with this pid exists (signal 0; EPERM
// means it exists but is not ours). A zombie (killed, not yet reaped by its
// parent) does not: it writes nothing any more. Linux says so in /proc.
func pidExists(pid int) bool {
	err := syscall.Kill(pid, 0)
	if err != nil && !errors.Is(err, syscall.EPERM) {
		return false
	}

	if b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat"); err == nil {
		s := string(b)
		// The command name (field 2) may hold spaces and parentheses: the
		// state follows the last ')'.
		if i := strings.LastIndexByte(s, ')'); i > 0 && strings.HasPrefix(s[i+1:], " Z") {
			return false
		}
	}

	return true
}
