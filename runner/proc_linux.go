package runner

import (
	"os"
	"strconv"
	"strings"
)

// StartTime returns a process's start time in clock ticks since boot (field
// 22 of /proc/<pid>/stat). With the pid it identifies a process for good: a
// reused pid has another start time.
func StartTime(pid int) (uint64, error) {
	f, err := statFields(pid)
	if err != nil {
		return 0, err
	}
	// f[0] is field 3 (state); field 22 is f[19].
	if len(f) < 20 {
		return 0, os.ErrInvalid
	}
	return strconv.ParseUint(f[19], 10, 64)
}

// pidAlive reports whether pid names a process that is not a zombie.
func pidAlive(pid int) bool {
	f, err := statFields(pid)
	return err == nil && len(f) > 0 && f[0] != "Z"
}

// statFields returns the fields of /proc/<pid>/stat from field 3 (state)
// on. The command name (field 2) may hold spaces and parentheses: fields
// start after the last ')'.
func statFields(pid int) ([]string, error) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return nil, err
	}
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return nil, os.ErrInvalid
	}
	return strings.Fields(s[i+1:]), nil
}
