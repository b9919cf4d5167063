package runner

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// findLeftovers scans /proc for processes of this user that carry the
// invocation's AGENCY_INVOCATION_ID in their environment (everything the
// agent started inherits it, across setsid and double forks), or that have
// no controlling terminal and their working directory inside the sandbox
// (a daemon that cleaned its environment). A process with a terminal and
// its directory there is a person's shell or editor: left alone. tmux
// servers are never counted: they serve every session.
func findLeftovers(inv, sandbox string) []Proc {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}

	skip, self := notOurs(), os.Getpid()
	marker := []byte("AGENCY_INVOCATION_ID=" + inv + "\x00")
	root := canonicalDir(sandbox)
	uid := os.Getuid()
	var out []Proc
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || skip[pid] || parentOf(pid) == self {
			continue // us, our ancestors, our own children (git, hooks)
		}

		dir := "/proc/" + e.Name()
		if fi, err := os.Stat(dir); err != nil || ownerOf(fi) != uid {
			continue
		}
		if exe, err := os.Readlink(dir + "/exe"); err == nil && strings.HasPrefix(filepath.Base(exe), "tmux") {
			continue
		}

		match := false
		if env, err := os.ReadFile(dir + "/environ"); err == nil && bytes.Contains(append([]byte{0}, env...), append([]byte{0}, marker...)) {
			match = true
		} else if root != "" && !hasTTY(pid) {
			if cwd, err := os.Readlink(dir + "/cwd"); err == nil && (cwd == root || strings.HasPrefix(cwd, root+"/")) {
				match = true
			}
		}

		if !match {
			continue
		}
		if st, err := StartTime(pid); err == nil && Alive(pid, &st) {
			out = append(out, Proc{PID: pid, Start: st})
		}
	}

	return out
}

func canonicalDir(p string) string {
	if p == "" {
		return ""
	}
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return filepath.Clean(p)
}

// hasTTY: field 7 (tty_nr) is not 0.
func hasTTY(pid int) bool {
	f, _ := statFields(pid)
	return len(f) > 4 && f[4] != "0"
}

// parentOf: field 4 (ppid).
func parentOf(pid int) int {
	f, _ := statFields(pid)
	if len(f) < 2 {
		return 0
	}
	n, _ := strconv.Atoi(f[1])
	return n
}

// ownerOf is the uid owning a /proc/<pid> directory.
func ownerOf(fi os.FileInfo) int {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return int(st.Uid)
	}
	return -1
}
