package store

import (
	"strconv"
	"strings"
)

// writerTag is put into the name of every temp file git-agency makes
// (record writes, snapshot temp indexes): "<pid>-". A crash leaves the file
// behind; the pid tells doctor and gc at once that its writer is gone,
// instead of waiting for the file to grow old.
func writerTag(pid int) string { return strconv.Itoa(pid) + "-" }

// tempWriterPID reads the writer's pid from a temp file name: what follows
// marker ("tmp-" or the snapshot index prefix) up to the next "-". ok is
// false for a name without one (an older file).
func tempWriterPID(name, marker string) (pid int, ok bool) {
	i := strings.LastIndex(name, marker)
	if i < 0 {
		return 0, false
	}

	rest := name[i+len(marker):]
	j := strings.IndexByte(rest, '-')
	if j <= 0 {
		return 0, false
	}

	n, err := strconv.Atoi(rest[:j])
	if err != nil || n <= 0 {
		return 0, false
	}

	return n, true
}

// TempWriterGone tells whether the process that made a temp file is
// certainly gone: its name carries a pid and no process has that pid. A
// live process with the same pid (reuse) counts as not gone: the file is
// then left for the age rule.
func TempWriterGone(name, marker string) bool {
	pid, ok := tempWriterPID(name, marker)
	if !ok {
		return false
	}
	return !pidExists(pid)
}
