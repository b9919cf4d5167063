package runner

import (
	"os"
	"syscall"
	"time"
)

// Proc is one process, identified for good by its pid and start time.
type Proc struct {
	PID   int
	Start uint64
}

// leftoverProcs lists the processes an invocation's agent left behind that
// its process group does not hold: children that called setsid (a daemon
// such as `codex app-server`) and so outlive a signal to the group. On
// Linux they are found through /proc (see findLeftovers); elsewhere none
// are found, which never stops anything that is not ours.
func leftoverProcs(inv, sandbox string) []Proc {
	return findLeftovers(inv, sandbox)
}

// StopLeftovers stops the processes leftoverProcs finds: SIGTERM, then
// SIGKILL to whatever is still there after grace. It returns those it
// signalled, and those still alive at the end (not ours to kill, say).
func StopLeftovers(inv, sandbox string, grace time.Duration) (stopped, alive []Proc) {
	procs := leftoverProcs(inv, sandbox)
	if len(procs) == 0 {
		return nil, nil
	}

	for _, p := range procs {
		if Alive(p.PID, &p.Start) {
			syscall.Kill(p.PID, syscall.SIGTERM)
		}
	}

	deadline := time.Now().Add(grace)
	for time.Now().Before(deadline) && anyAlive(procs) {
		time.Sleep(50 * time.Millisecond)
	}

	for _, p := range procs {
		if Alive(p.PID, &p.Start) {
			syscall.Kill(p.PID, syscall.SIGKILL)
		}
	}

	// SIGKILL is not instant: give the kernel a moment to reap.
	deadline = time.Now().Add(time.Second)
	for time.Now().Before(deadline) && anyAlive(procs) {
		time.Sleep(20 * time.Millisecond)
	}

	for _, p := range procs {
		if Alive(p.PID, &p.Start) {
			alive = append(alive, p)
		}
	}

	return procs, alive
}

func anyAlive(procs []Proc) bool {
	for _, p := range procs {
		if Alive(p.PID, &p.Start) {
			return true
		}
	}
	return false
}

// notOurs are processes never counted as an agent's leftovers: this process
// and its ancestors (a `git agency` an agent ran itself). Its own children
// are skipped too (the checkpointer's git, a notify command), but not its
// ancestors' other children: an orphaned daemon may be reparented to a
// subreaper that is our ancestor too.
func notOurs() map[int]bool {
	skip := map[int]bool{}
	for pid := os.Getpid(); pid > 1 && !skip[pid]; pid = parentOf(pid) {
		skip[pid] = true
	}
	return skip
}
