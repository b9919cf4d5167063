//go:build !linux

package runner

import "syscall"

// verifySysProcAttr puts a verify step in its own process group.
func verifySysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
