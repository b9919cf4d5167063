package runner

import "syscall"

// verifySysProcAttr puts a verify step in its own process group and has
// the kernel kill it when the land running it dies (a kill -9 must not
// leave a check running).
func verifySysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
