package gitcore

import (
	"os"
	"os/exec"
	"os/signal"
	"syscall"
	"time"

	"github.com/git-agency/git-agency/internal/subproc"
)

// interruptGroup makes cmd the leader of a new process group and its
// cancellation a SIGINT to that group; after wait, exec kills git itself.
//
// The group lets a cancelled context stop git's children (the checkout,
// a hook) with it; the price is that the terminal no longer signals them.
// Ctrl-C and SIGTERM reach git as our cancellation (the caller's context
// ends on both); a hangup is passed on by runGroup. A second Ctrl-C exits
// at once without waiting for git, which is already cleaning up after the
// first. A child that reads the terminal (a prompting hook, an ssh
// passphrase asked by a filter) is outside the terminal's foreground
// group and stops on SIGTTIN.
func interruptGroup(cmd *exec.Cmd, wait time.Duration) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGINT) }
	cmd.WaitDelay = wait
}

// runGroup runs cmd (made a group by interruptGroup), traced. A SIGHUP of
// ours while it runs (the terminal hung up) is passed on to the group, as
// the terminal would have signalled git in our own group, and then we die
// of it as we would have anyway. Under nohup (SIGHUP ignored) git ignores
// it too, and nothing is passed on.
func runGroup(cmd *exec.Cmd) error {
	if signal.Ignored(syscall.SIGHUP) {
		return subproc.Run(cmd)
	}

	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	done := subproc.Trace(cmd)
	defer done()
	if err := cmd.Start(); err != nil {
		go forwardHangup(hup, 0, closed())
		return err
	}

	ended := make(chan struct{})
	defer close(ended)
	go forwardHangup(hup, cmd.Process.Pid, ended)
	return cmd.Wait()
}

// forwardHangup waits for a SIGHUP on hup until ended: it sends it to the
// group pid (when it still runs) and re-raises it on ourselves, with no
// handler left (Go's default for SIGHUP: the process dies of it).
func forwardHangup(hup chan os.Signal, pid int, ended <-chan struct{}) {
	select {
	case <-hup:
		if pid > 0 {
			_ = syscall.Kill(-pid, syscall.SIGHUP)
		}
	case <-ended:
		signal.Stop(hup)
		select {
		case <-hup: // came just as git ended: still ours
		default:
			return
		}
	}

	signal.Stop(hup)
	_ = syscall.Kill(os.Getpid(), syscall.SIGHUP)
}

// closed is a channel already closed.
func closed() chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}
