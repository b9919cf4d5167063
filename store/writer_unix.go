//go:build unix

package store

import (
	"errors"
	"syscall"
)

// pidExists tells whether a process with this pid exists (signal 0; EPERM
// means it exists but is not ours).
func pidExists(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
