package runner

import (
	"os"
	"strconv"
	"strings"
	"syscall"
)

// StartTime returns a process's start time in clock ticks since boot (field
// 22 of /proc/<pid>/stat). With the pid it identifies a process for good: a
// reused pid has another start time.
func StartTime(pid int) (uint64, error) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, err
	}
	// The command name (field 2) may hold spaces and parentheses: fields
	// start after the last ')'.
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, os.ErrInvalid
	}
	f := strings.Fields(s[i+1:])
	// f[0] is field 3 (state); field 22 is f[19].
	if len(f) < 20 {
		return 0, os.ErrInvalid
	}
	return strconv.ParseUint(f[19], 10, 64)
}

// Alive reports whether the process pid with the given start time still
// runs (a zombie counts as gone).
func Alive(pid int, start uint64) bool {
	if pid <= 0 {
		return false
	}
	st, err := StartTime(pid)
	if err != nil || (start != 0 && st != start) {
		return false
	}
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err == nil {
		s := string(data)
		if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) && s[i+2] == 'Z' {
			return false
		}
	}
	return true
}

// AlivePtr is Alive for a record's nullable pid and start time.
func AlivePtr(pid *int, start *uint64) bool {
	if pid == nil {
		return false
	}
	var s uint64
	if start != nil {
		s = *start
	}
	return Alive(*pid, s)
}

// SignalGroup sends sig to the process group led by pid, if that process is
// still the one we started.
func SignalGroup(pid int, start uint64, sig syscall.Signal) error {
	if !Alive(pid, start) {
		return os.ErrProcessDone
	}
	return syscall.Kill(-pid, sig)
}
