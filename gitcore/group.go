package gitcore

import (
	"os/exec"
	"syscall"
	"time"
)

// interruptGroup makes cmd the leader of a new process group and its
// cancellation a SIGINT to that group; after wait, exec kills git itself.
func interruptGroup(cmd *exec.Cmd, wait time.Duration) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGINT) }
	cmd.WaitDelay = wait
}
