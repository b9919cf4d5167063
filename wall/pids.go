package wall

import (
	"bufio"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/git-agency/git-agency/errs"
	"golang.org/x/sys/unix"
)

// The process limit (agency.isolate.maxProcs) is RLIMIT_NPROC inside the
// wall, which the kernel does not enforce for a process whose real user
// is root outside every user namespace: a root user's agent runs as an
// unprivileged user of its own namespace, but mapped to uid 0, which
// fork() exempts from the limit. So the limit is also a pids cgroup
// (pids.max, cgroup v2 or v1) when one can be made here, as root can
// where the cgroup filesystem is writable: the shell that starts
// bubblewrap makes <base>/git-agency-<its pid>, sets pids.max and moves
// itself into it before bubblewrap starts, so every process of the wall
// counts. A cgroup whose shell is gone is empty (nothing outlives the
// wall) and is removed by the next wall or when a run ends
// (SweepProcLimits).

// cgroupPrefix begins the name of every cgroup a wall makes.
const cgroupPrefix = "git-agency-"

// wallShellLimited is wallShell in the pids cgroup $1/git-agency-$$ with
// pids.max $2 (exit 125, and the shell's message, when that fails).
const wallShellLimited = `cg="$1/` + cgroupPrefix + `$$"; mkdir -p "$cg" && echo "$2" > "$cg/pids.max" && echo $$ > "$cg/cgroup.procs" || exit 125; shift 2; ` + wallShell

// ProcLimitBase is the directory of the pids controller where this
// process can make a wall's cgroup, "" when there is none: the root of a
// cgroup v2 hierarchy whose cgroup.subtree_control enables pids, or, with
// cgroup v1, this process's own pids cgroup (else that hierarchy's
// root). It must be writable.
func ProcLimitBase() string {
	mounts := cgroupMounts()
	if v2, ok := mounts["cgroup2"]; ok {
		b, _ := os.ReadFile(filepath.Join(v2, "cgroup.subtree_control"))
		if containsWord(string(b), "pids") && writable(v2) {
			return v2
		}
	}

	v1, ok := mounts["pids"]
	if !ok {
		return ""
	}
	if own := ownCgroup("pids"); own != "" {
		if d := filepath.Join(v1, own); writable(d) {
			return d
		}
	}
	if writable(v1) {
		return v1
	}

	return ""
}

// ProcLimitEnforced reports whether a walled agent's process limit holds
// here: RLIMIT_NPROC does for any user but root; for root, only a pids
// cgroup does.
func ProcLimitEnforced() bool {
	return os.Geteuid() != 0 || ProcLimitBase() != ""
}

// cgroupMounts maps "cgroup2" to the mount point of the cgroup v2
// hierarchy and "pids" to that of the cgroup v1 pids hierarchy, as
// /proc/self/mountinfo lists them.
func cgroupMounts() map[string]string {
	out := map[string]string{}
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return out
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		fields, tail := strings.Fields(pre), strings.Fields(post)
		if !ok || len(fields) < 5 || len(tail) < 3 {
			continue
		}

		mnt := unescapeMount(fields[4])
		switch {
		case tail[0] == "cgroup2":
			out["cgroup2"] = mnt
		case tail[0] == "cgroup" && containsWord(strings.ReplaceAll(tail[2], ",", " "), "pids"):
			out["pids"] = mnt
		}
	}

	return out
}

// ownCgroup is this process's cgroup path in the v1 hierarchy of
// controller, from /proc/self/cgroup ("" when unknown).
func ownCgroup(controller string) string {
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(b), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) == 3 && containsWord(strings.ReplaceAll(parts[1], ",", " "), controller) {
			return parts[2]
		}
	}
	return ""
}

// SweepProcLimits removes the empty cgroups walls made under base whose
// shell (named by the cgroup) is gone. A cgroup that still holds a
// process is left alone (rmdir refuses it).
func SweepProcLimits(base string) {
	if base == "" {
		return
	}

	entries, err := os.ReadDir(base)
	if err != nil {
		return
	}

	for _, e := range entries {
		pid, err := strconv.Atoi(strings.TrimPrefix(e.Name(), cgroupPrefix))
		if !e.IsDir() || !strings.HasPrefix(e.Name(), cgroupPrefix) || err != nil {
			continue
		}
		if unix.Kill(pid, 0) == unix.ESRCH {
			unix.Rmdir(filepath.Join(base, e.Name()))
		}
	}
}

func writable(dir string) bool { return unix.Access(dir, unix.W_OK) == nil }

func containsWord(s, w string) bool {
	for _, f := range strings.Fields(s) {
		if f == w {
			return true
		}
	}
	return false
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}

	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}

		b.WriteByte(s[i])
	}

	return b.String()
}

// ProcLimitWarning is the warning of a process limit that cannot hold
// here (ProcLimitEnforced), nil when there is none or it holds.
func ProcLimitWarning(ws Settings) error {
	if ws.MaxProcs <= 0 || ws.Mode == IsolateOff || ProcLimitEnforced() {
		return nil
	}
	return errs.ProcLimitUnenforced(ws.MaxProcs)
}
