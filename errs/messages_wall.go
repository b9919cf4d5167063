package errs

import "strings"

// The wall (agency.isolate): why bubblewrap cannot wall an agent here,
// and how to fix it.

// Causes of an unusable bubblewrap (WallCause).
const (
	WallMissing   = "missing"
	WallUserns    = "userns"
	WallContainer = "container"
	WallBroken    = "failed"
)

// WallWhy is one sentence on why bubblewrap cannot make a wall.
func WallWhy(cause, detail string) string {
	switch cause {
	case WallMissing:
		return "bubblewrap (bwrap) is not installed"
	case WallUserns:
		return "bubblewrap cannot create a namespace here: user namespaces are disabled (" + oneLine(detail) + ")"
	case WallContainer:
		return "bubblewrap cannot create a namespace inside this container (" + oneLine(detail) + ")"
	}
	return "bubblewrap fails: " + oneLine(detail)
}

// WallFix is the fix for a cause of WallWhy.
func WallFix(cause string) string {
	switch cause {
	case WallMissing:
		return "install it (apt-get install -y bubblewrap, dnf install bubblewrap), or run agents unwalled: git config agency.isolate off"
	case WallUserns:
		return "allow unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1; on Ubuntu 24.04 kernel.apparmor_restrict_unprivileged_userns=0; user.max_user_namespaces > 0), or: git config agency.isolate off"
	case WallContainer:
		return "start the container with --cap-add SYS_ADMIN --security-opt seccomp=unconfined --security-opt apparmor=unconfined, or let the container be the wall: git config agency.isolate off"
	}
	return "run 'git agency doctor'; or run agents unwalled: git config agency.isolate off"
}

// WallUnavailable refuses a start under agency.isolate bwrap.
func WallUnavailable(cause, detail string) *Error {
	return New(EWallUnavailable, WallFix(cause), "agency.isolate is bwrap, and %s; nothing was created", WallWhy(cause, detail))
}

// WallUnwalled is the warning of a start under agency.isolate auto that
// runs without the wall.
func WallUnwalled(cause, detail string) *Error {
	return New(EWallUnavailable, WallFix(cause), "the agent runs without the wall: %s ('git agency doctor' says more)", WallWhy(cause, detail))
}

// WallFailed is a wall that did not start for this invocation.
func WallFailed(detail string) *Error {
	return New(EWallFailed, "look at the cause above; 'git agency doctor' checks bubblewrap; git config agency.isolate off runs agents unwalled",
		"the wall around the agent failed to start: %s; nothing was left behind", oneLine(detail))
}

// WallNotUp is the error an invocation's record keeps when its agent's
// wall failed to start and its start was not there to remove it (killed
// while it waited for the wall's word).
func WallNotUp(detail string) string {
	return "the wall around the agent failed to start: " + oneLine(detail)
}

// RefMoved refuses a land whose branch moved behind its reflog.
func RefMoved(branch, tip, expected, found string) *Error {
	return New(ERefMoved, "look at 'git log "+branch+"' and 'git reflog "+branch+"'; put it back where git left it, marking the move as seen: git update-ref -m 'agency: accept' refs/heads/"+branch+" "+expected+" (a sandbox built on it: discard it)",
		"branch %s was moved behind git's back: its reflog expected %s, found %s (an agent writing the ref file?); nothing was landed", branch, short(expected), short(found))
}

func oneLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return strings.TrimPrefix(s, "bwrap: ")
}

// SupervisorGone is what a record says of a run whose supervisor died
// before recording its end. A walled headless agent ends with its
// supervisor (the wall dies with it): said, so that the record tells why
// the agent stopped mid-task.
func SupervisorGone(walledHeadless bool) string {
	if walledHeadless {
		return "the supervisor is gone, and its walled agent ended with it (a walled agent never outlives its supervisor: see docs/wall.md); the outcome was reconstructed"
	}
	return "the supervisor is gone; the outcome was reconstructed"
}

// ProcLimitUnenforced warns that agency.isolate.maxProcs (max) cannot
// hold here: the user is root, whom RLIMIT_NPROC does not stop, and no
// pids cgroup can be made.
func ProcLimitUnenforced(max int) *Error {
	return New(EConfig, "run git-agency where the cgroup filesystem is writable (/sys/fs/cgroup, with the pids controller), or as a user other than root",
		"agency.isolate.maxProcs is %d, but it does not hold here: the kernel does not apply the process limit to root, and no pids cgroup can be made (docs/wall.md)", max)
}
