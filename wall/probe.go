package wall

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/git-agency/git-agency/errs"
	"github.com/git-agency/git-agency/internal/subproc"
)

// wallProbeWait bounds one bubblewrap trial run.
const wallProbeWait = 10 * time.Second

// Check is whether bubblewrap can make a wall on this machine.
type Check struct {
	// Bwrap is the program found ("" when missing).
	Bwrap string
	// Cause is "" when the wall works, else one of errs.WallMissing,
	// errs.WallUserns, errs.WallContainer, errs.WallBroken; Detail is
	// bubblewrap's own message.
	Cause, Detail string
}

// OK reports whether the wall works.
func (c Check) OK() bool { return c.Cause == "" }

// Installed is whether bubblewrap is installed at all, running nothing:
// OK with the program found, else the cause Probe would give.
func Installed() Check {
	bwrap, err := exec.LookPath("bwrap")
	if err != nil {
		return Check{Cause: errs.WallMissing, Detail: err.Error()}
	}
	return Check{Bwrap: bwrap}
}

// Probe runs bubblewrap once with the namespaces and mounts a wall
// uses, around /bin/true, and says why it failed if it did.
func Probe(ctx context.Context) Check {
	check := Installed()
	if !check.OK() {
		return check
	}
	bwrap := check.Bwrap
	args := []string{"--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
		"--unshare-pid", "--unshare-ipc", "--die-with-parent", "--cap-drop", "ALL", "--tmpfs", "/tmp", "--", "/bin/true"}
	out, err := runBwrap(ctx, bwrap, args)
	if err == nil {
		return Check{Bwrap: bwrap}
	}
	return Check{Bwrap: bwrap, Cause: classifyWallFailure(out), Detail: firstLine(out, err)}
}

// Try runs /bin/true inside the wall w, as the agent will be run,
// and returns bubblewrap's message when that fails.
func Try(ctx context.Context, w *Wall) error {
	argv := w.Command([]string{"true"})
	out, err := runBwrap(ctx, argv[0], argv[1:])
	w.ended()
	if err != nil {
		return errs.WallFailed(firstLine(out, err))
	}
	return nil
}

func runBwrap(ctx context.Context, prog string, args []string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, wallProbeWait)
	defer cancel()
	cmd := exec.CommandContext(ctx, prog, args...)
	cmd.Env = subproc.Scrub(os.Environ(), nil)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	traced := subproc.Trace(cmd)
	err := cmd.Run()
	traced()
	return out.Bytes(), err
}

func firstLine(out []byte, err error) string {
	s := strings.TrimSpace(string(out))
	if s == "" {
		return err.Error()
	}
	return strings.SplitN(s, "\n", 2)[0]
}

// classifyWallFailure tells a kernel or container that refuses namespaces
// apart from any other failure of bubblewrap.
func classifyWallFailure(out []byte) string {
	msg := strings.ToLower(string(out))
	denied := false
	for _, s := range []string{"namespace", "uid map", "operation not permitted", "permission denied", "no permissions"} {
		denied = denied || strings.Contains(msg, s)
	}

	switch {
	case !denied:
		return errs.WallBroken
	case inContainer():
		return errs.WallContainer
	}

	return errs.WallUserns
}

// inContainer reports whether this process seems to run in a container.
func inContainer() bool {
	for _, p := range []string{"/.dockerenv", "/run/.containerenv"} {
		if _, err := os.Stat(p); err == nil {
			return true
		}
	}

	if os.Getenv("container") != "" {
		return true
	}

	b, _ := os.ReadFile("/proc/1/cgroup")
	for _, s := range []string{"docker", "kubepods", "containerd", "lxc", "podman"} {
		if bytes.Contains(b, []byte(s)) {
			return true
		}
	}

	return false
}
