package runner

import (
	"os"
	"syscall"
)

// StartTimeOf returns pid's start time for a record, or nil when it cannot
// be read. nil means "unknown", never "matches anything": see Alive.
func StartTimeOf(pid int) *uint64 {
	st, err := StartTime(pid)
	if err != nil {
		return nil
	}
	return &st
}

// Alive reports whether the process pid recorded with start still runs. A
// process whose start time differs from the recorded one is another process
// that reuses the pid, and the recorded one is gone. When either start time
// is unknown (nil, or unreadable now), only the pid's liveness can be told,
// and a live pid counts as alive: a live agent is never declared dead.
func Alive(pid int, start *uint64) bool {
	if pid <= 0 {
		return false
	}
	alive, st, err := procState(pid)
	if !alive {
		return false
	}
	return start == nil || err != nil || st == *start
}

// AlivePtr is Alive for a record's nullable pid and start time.
func AlivePtr(pid *int, start *uint64) bool {
	return pid != nil && Alive(*pid, start)
}

// SignalGroup sends sig to the process group led by pid, if that process is
// still the one we started.
func SignalGroup(pid int, start *uint64, sig syscall.Signal) error {
	if !Alive(pid, start) {
		return os.ErrProcessDone
	}
	return syscall.Kill(-pid, sig)
}
