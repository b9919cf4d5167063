package runner

import (
	"bytes"
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

// procState reads /proc/<pid>/stat once (watch asks for every running
// invocation every second): whether pid names a process that is not a
// zombie and, when it does, its start time (startErr when unreadable).
func procState(pid int) (alive bool, start uint64, startErr error) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false, 0, err
	}

	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return false, 0, os.ErrInvalid
	}

	// Fields from 3 (state) on, without splitting them all: field 22 is
	// the 20th.
	var state, field22 []byte
	n := 0
	for rest := data[i+1:]; ; n++ {
		rest = bytes.TrimLeft(rest, " \n")
		if len(rest) == 0 {
			break
		}

		end := bytes.IndexAny(rest, " \n")
		if end < 0 {
			end = len(rest)
		}

		switch n {
		case 0:
			state = rest[:end]
		case 19:
			field22 = rest[:end]
		}

		if n == 19 {
			break
		}

		rest = rest[end:]
	}

	if len(state) == 0 || string(state) == "Z" {
		return false, 0, nil
	}
	if field22 == nil {
		return true, 0, os.ErrInvalid
	}

	start, err = strconv.ParseUint(string(field22), 10, 64)
	return true, start, err
}

// groupHasLive reports whether a process of group pgid is alive and not a
// zombie. A zombie waits for its reaper (the walled agent's bubblewrap
// init, reparented to pid 1 once the wall is down, may wait a while) and
// can change nothing.
func groupHasLive(pgid int) bool {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return true
	}

	want := strconv.Itoa(pgid)
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}

		f, err := statFields(pid)

		// f[0] is field 3 (state), f[2] field 5 (the process group).
		if err == nil && len(f) > 2 && f[2] == want && f[0] != "Z" {
			return true
		}
	}

	return false
}
