package gitagency_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/git-agency/git-agency/host"
	"github.com/git-agency/git-agency/internal/sshdtest"
)

// hostRig is a local repository with a host "box" behind a real sshd: the
// host side has its own HOME, data directory and git-agency install.
type hostRig struct {
	t     *testing.T
	sshd  *sshdtest.Sshd
	bin   string // the built git-agency
	repo  string
	env   []string
	wt    string // the integration worktree's tree
	local string // local data dir
}

func newHostRig(t *testing.T) *hostRig {
	t.Helper()
	s := sshdtest.Start(t)
	dir := t.TempDir()
	bin := hostTestBinary(t)
	r := &hostRig{t: t, sshd: s, bin: bin, repo: filepath.Join(dir, "repo"), local: filepath.Join(dir, "data")}
	home := filepath.Join(dir, "home")
	os.MkdirAll(home, 0o700)
	r.env = append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"), "XDG_DATA_HOME="+filepath.Join(home, ".local/share"),
		"GIT_CONFIG_NOSYSTEM=1", "LC_ALL=C", "TZ=UTC", "AGENCY_DATA_DIR="+r.local, "TMUX=", "EDITOR=", "VISUAL=",
		"PATH="+filepath.Dir(bin)+":"+os.Getenv("PATH"))
	ident := "[user]\n\tname = Agency Test\n\temail = test@example.com\n[init]\n\tdefaultBranch = main\n"
	os.WriteFile(filepath.Join(home, ".gitconfig"), []byte(ident), 0o600)
	// The host: git-agency installed, its own identity.
	os.WriteFile(filepath.Join(s.HostHome, ".gitconfig"), []byte(ident), 0o600)
	os.MkdirAll(filepath.Join(s.HostHome, ".local", "bin"), 0o755)
	copyFile(t, bin, filepath.Join(s.HostHome, ".local", "bin", "git-agency"))
	os.MkdirAll(r.repo, 0o755)
	r.git("init", "-q")
	os.WriteFile(filepath.Join(r.repo, "a.txt"), []byte("one\n"), 0o644)
	r.git("add", "a.txt")
	r.git("commit", "-qm", "a")
	r.git("config", "agency.runner.sh.command", "sh")
	r.git("config", "agency.runner.sh.headlessArg", "-c")
	r.git("config", "agency.isolate", "off")
	r.git("config", "agency.host.box.ssh", s.Alias)
	r.git("config", "agency.host.sshConfig", s.ClientConfig)
	var wt struct {
		TreePath string `json:"tree_path"`
	}
	json.Unmarshal([]byte(r.agency("worktree", "create", "--name", "feat", "--json")), &wt)
	r.wt = wt.TreePath
	// Before the TempDir's removal (registered first, it runs after).
	t.Cleanup(r.endProcesses)
	return r
}

// tempDir is a new directory for a test's own files that the processes
// the rig started write to (a notify command's notes, a check's gate):
// it goes with the rig's directory, after endProcesses, where a
// t.TempDir made after the rig would go before it.
func (r *hostRig) tempDir() string {
	r.t.Helper()
	d, err := os.MkdirTemp(filepath.Dir(r.repo), "t")
	if err != nil {
		r.t.Fatal(err)
	}
	return d
}

// endProcesses ends every process the rig started, before its
// directories go: the fetchers (with their git fetches and ssh), the
// retired trees' removers, local supervisors, the client's ssh
// ControlMasters. A fetcher an act (agent kill, land) spawned just before
// the test ended may not have written its pid file yet, and it goes on
// fetching into the repository, so they are found by what they all
// inherit from the commands the test ran: the rig's AGENCY_DATA_DIR in
// their environment; but a ControlMaster's title overwrites its
// environment, so those are found by their control socket. They are
// killed until none is left (one may be starting another).
func (r *hostRig) endProcesses() {
	deadline := time.Now().Add(10 * time.Second)
	for {
		ps := append(r.rigProcesses(), r.masterPIDs()...)
		if len(ps) == 0 {
			return
		}
		for _, p := range ps {
			r.t.Logf("ending %d: %s", p, cmdline(p))
			syscall.Kill(p, syscall.SIGKILL)
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("the rig's processes outlive SIGKILL: %v", ps)
		}
		// Waiting for the kernel to end them: no event to wait on.
		time.Sleep(20 * time.Millisecond)
	}
}

// rigProcesses are the live processes with the rig's AGENCY_DATA_DIR in
// their environment (a zombie has none left: it writes nothing more).
func (r *hostRig) rigProcesses() []int {
	mark := []byte("\x00AGENCY_DATA_DIR=" + r.local + "\x00")
	var out []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err == nil && bytes.Contains(append([]byte{0}, b...), mark) && !zombie(pid) {
			out = append(out, pid)
		}
	}
	return out
}

// cmdline is process pid's command line, for the test's log.
func cmdline(pid int) string {
	b, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
	return strings.TrimSpace(string(bytes.ReplaceAll(b, []byte{0}, []byte{' '})))
}

func copyFile(t *testing.T, from, to string) {
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o755); err != nil {
		t.Fatal(err)
	}
}

func (r *hostRig) git(args ...string) string {
	r.t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir, cmd.Env = r.repo, r.env
	out, err := cmd.CombinedOutput()
	if err != nil {
		r.t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

func (r *hostRig) run(args ...string) (string, error) {
	cmd := exec.Command(r.bin, args...)
	cmd.Dir, cmd.Env = r.repo, r.env
	out, err := cmd.Output()
	if ee := (*exec.ExitError)(nil); errors.As(err, &ee) {
		return string(out) + string(ee.Stderr), err
	}
	return strings.TrimSpace(string(out)), err
}

func (r *hostRig) agency(args ...string) string {
	r.t.Helper()
	out, err := r.run(args...)
	if err != nil {
		r.t.Fatalf("git-agency %v: %v\n%s", args, err, out)
	}
	return out
}

// fetcherPIDs are the live host fetchers' process ids, as they wrote them.
// A killed fetcher is reparented to init, and an init that does not reap
// (CI's container) leaves it a zombie, which is not a fetcher; nor is a
// process that reuses a dead fetcher's pid.
func (r *hostRig) fetcherPIDs() []int {
	var out []int
	fs, _ := filepath.Glob(filepath.Join(r.local, "repos", "*", "hosts", "*.fetcher"))
	for _, f := range fs {
		b, _ := os.ReadFile(f)
		if n, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && n > 0 && syscall.Kill(n, 0) == nil && !zombie(n) && isFetcher(n) {
			out = append(out, n)
		}
	}
	return out
}

// isFetcher: process pid is a host fetcher (the pid a killed fetcher
// wrote may be another process's by now).
func isFetcher(pid int) bool {
	b, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
	return bytes.Contains(b, []byte("\x00host-fetch\x00"))
}

// killFetchers ends the host fetchers, with their git fetches and ssh
// (each fetcher leads its own session), and waits until they are gone.
func (r *hostRig) killFetchers() {
	for _, p := range r.fetcherPIDs() {
		syscall.Kill(-p, syscall.SIGKILL)
		syscall.Kill(p, syscall.SIGKILL)
		r.eventually(10*time.Second, "fetcher gone", func() bool { return syscall.Kill(p, 0) != nil || zombie(p) })
		r.eventually(10*time.Second, "fetcher's children gone", func() bool { return groupGone(p) })
	}
}

// groupGone: no live process is left in process group pgid.
func groupGone(pgid int) bool {
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
		if len(f) > 2 && f[0] != "Z" && f[2] == strconv.Itoa(pgid) {
			return false
		}
	}
	return true
}

// zombie: the process ended and waits for its parent (a fetcher's parent
// is whoever started it; it reaps it when it ends too).
func zombie(pid int) bool {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return true
	}
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	return len(f) > 0 && f[0] == "Z"
}

// eventually polls cond (a state another process reaches) until it holds,
// failing after within.
func (r *hostRig) eventually(within time.Duration, what string, cond func() bool) {
	r.t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			r.t.Fatalf("never: %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// hasRef says whether the local repository has ref.
func (r *hostRig) hasRef(ref string) bool {
	cmd := exec.Command("git", "rev-parse", "-q", "--verify", ref)
	cmd.Dir, cmd.Env = r.repo, r.env
	return cmd.Run() == nil
}

// hostRecord is the host's own record of id (its meta.json there).
func (r *hostRig) hostRecord(id string) map[string]any {
	ms, _ := filepath.Glob(filepath.Join(r.sshd.HostHome, ".local/share/agency/repos/*/invocations", id, "meta.json"))
	var rec map[string]any
	if len(ms) == 1 {
		b, _ := os.ReadFile(ms[0])
		json.Unmarshal(b, &rec)
	}
	return rec
}

// waitStatus polls `agent show` (a remote agent's end reaches us only by
// asking) until the invocation has status want.
func (r *hostRig) waitStatus(id, want string) map[string]any {
	r.t.Helper()
	deadline := time.Now().Add(120 * time.Second)
	for {
		var rec map[string]any
		out := r.agency("agent", "show", id, "--json")
		json.Unmarshal([]byte(out), &rec)
		if rec["status"] == want {
			return rec
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("%s never reached %s: %s", id, want, out)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// An agent started on a host commits there; its branch comes back as
// refs and lands here, through the local land.
func TestHostStartFetchLand(t *testing.T) {
	r := newHostRig(t)
	out := r.agency("host", "ls")
	if !strings.Contains(out, "box") || !strings.Contains(out, "reachable") || strings.Contains(out, "unreachable") {
		t.Fatalf("host ls: %s", out)
	}
	id := r.agency("agent", "start", "-w", "feat", "--host", "box", "--runner", "sh", "--headless", "--prompt",
		"echo two > b.txt && git add b.txt && git commit -qm agent-work")
	// The host's fetcher brings the work back with no view asking.
	r.eventually(60*time.Second, "the sandbox branch fetched in the background", func() bool { return r.hasRef("agency/sandbox-" + id) })
	rec := r.waitStatus(id, "finished")
	if rec["host"] != "box" {
		t.Fatalf("record without its host: %v", rec)
	}
	if got := r.git("log", "-1", "--format=%s", "agency/sandbox-"+id); got != "agent-work" {
		t.Fatalf("sandbox branch not fetched: %q", got)
	}
	ls := r.agency("agent", "ls")
	if !strings.Contains(ls, "box") {
		t.Fatalf("agent ls does not show the host: %s", ls)
	}
	r.agency("agent", "land", id)
	if b, err := os.ReadFile(filepath.Join(r.wt, "b.txt")); err != nil || string(b) != "two\n" {
		t.Fatalf("not landed: %q %v", b, err)
	}
}

// A host whose sshd goes away mid-run: the agent finishes there, views
// answer within 5 s saying so, and on reconnect its outcome and commits
// come back and land.
func TestHostLossAndCatchUp(t *testing.T) {
	r := newHostRig(t)
	gate := filepath.Join(r.sshd.HostHome, "go-on")
	id := r.agency("agent", "start", "-w", "feat", "--host", "box", "--runner", "sh", "--headless", "--prompt",
		"while [ ! -e "+gate+" ]; do sleep 0.1; done; echo three > c.txt && git add c.txt && git commit -qm after-loss")
	r.waitStatus(id, "running")
	r.sshd.Stop()
	// The host's agent goes on without the link.
	os.WriteFile(gate, nil, 0o644)
	r.downViews(time.Now())
	r.sshd.Restart()
	r.waitStatus(id, "finished")
	if got := r.git("log", "-1", "--format=%s", "agency/sandbox-"+id); got != "after-loss" {
		t.Fatalf("commits not fetched after reconnect: %q", got)
	}
	r.agency("agent", "land", id)
	if _, err := os.Stat(filepath.Join(r.wt, "c.txt")); err != nil {
		t.Fatal("not landed after reconnect")
	}
}

// downViews checks, the host down since lost, that host ls and agent ls
// answer within 5 s each and say it is unreachable within 5 s of lost.
func (r *hostRig) downViews(lost time.Time) {
	r.t.Helper()
	for _, args := range [][]string{{"host", "ls"}, {"agent", "ls"}} {
		for {
			start := time.Now()
			out, _ := r.run(args...)
			if d := time.Since(start); d > 5*time.Second {
				r.t.Fatalf("%v took %v while the host was down", args, d)
			}
			if strings.Contains(out, "unreachable since") {
				break
			}
			if time.Since(lost) > 5*time.Second {
				r.t.Fatalf("%v does not say the host is unreachable 5 s after: %s", args, out)
			}
		}
	}
}

// A host running another version is refused with the install hint; host
// install copies this build and the start then goes.
func TestHostVersionAndInstall(t *testing.T) {
	r := newHostRig(t)
	fake := filepath.Join(r.sshd.HostHome, ".local", "bin", "git-agency")
	os.WriteFile(fake, []byte("#!/bin/sh\nif [ \"$1\" = host-serve ]; then echo '{\"version\":\"0.0.1\",\"mirror\":\"/x\"}'; exit 0; fi\necho git-agency version 0.0.1\n"), 0o755)
	out, err := r.run("agent", "start", "-w", "feat", "--host", "box", "--runner", "sh", "--headless", "--prompt", "true")
	if err == nil || !strings.Contains(out, "E_HOST_VERSION") || !strings.Contains(out, "host install box") {
		t.Fatalf("another version not refused with the hint: %v %s", err, out)
	}
	out = r.agency("host", "install", "box")
	if !strings.Contains(out, "installed") {
		t.Fatal(out)
	}
	r.agency("agent", "start", "-w", "feat", "--host", "box", "--runner", "sh", "--headless", "--prompt", "true")
	out, _ = r.run("host", "check", "box")
	if !strings.Contains(out, "ok   version") || !strings.Contains(out, "ok   ssh") {
		t.Fatalf("host check: %s", out)
	}
}

// hostBin is git-agency built once for the host tests (the host side
// needs a real program file to run over ssh).
var hostBin string

func hostTestBinary(t *testing.T) string {
	t.Helper()
	buildHelpers(t)
	if hostBin != "" {
		return hostBin
	}
	bin := filepath.Join(binDir, "host", "git-agency")
	build := exec.Command("go", "build", "-o", bin, "./cmd/git-agency")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	hostBin = bin
	return bin
}

// logs, stop and discard of an agent on a host act there, with the same
// id, and the record here follows.
func TestHostLogsStopDiscard(t *testing.T) {
	r := newHostRig(t)
	id := r.agency("agent", "start", "-w", "feat", "--host", "box", "--runner", "sh", "--headless", "--prompt",
		"echo hello-from-box; exec sleep 600")
	r.waitStatus(id, "running")
	deadline := time.Now().Add(30 * time.Second)
	for {
		out, _ := r.run("agent", "logs", id, "--raw")
		if strings.Contains(out, "hello-from-box") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("logs never showed the host's output: %s", out)
		}
		time.Sleep(200 * time.Millisecond)
	}
	r.agency("agent", "stop", id)
	rec := r.waitStatus(id, "finished")
	if rec["exit_reason"] != "stopped" {
		t.Fatalf("stopped on the host, record says %v", rec["exit_reason"])
	}
	hostTrees := filepath.Join(r.sshd.HostHome, ".local/share/agency/repos/*/sandboxes", id, "tree")
	if trees, _ := filepath.Glob(hostTrees); len(trees) != 1 {
		t.Fatalf("no sandbox on the host at %s", hostTrees)
	}
	r.agency("agent", "discard", id)
	var shown map[string]any
	json.Unmarshal([]byte(r.agency("agent", "show", id, "--json")), &shown)
	if shown["landing_status"] != "discarded" {
		t.Fatalf("not discarded here: %v", shown["landing_status"])
	}
	if trees, _ := filepath.Glob(hostTrees); len(trees) != 0 {
		t.Fatalf("the host kept the sandbox: %v", trees)
	}
}

// snapshot is every file of the local data directory's repositories and
// host caches, and every local ref, byte for byte.
func (r *hostRig) snapshot() string {
	var b strings.Builder
	for _, root := range []string{filepath.Join(r.local, "repos"), filepath.Join(r.local, "hosts")} {
		filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
			if err != nil || !d.Type().IsRegular() {
				return nil
			}
			data, _ := os.ReadFile(p)
			fmt.Fprintf(&b, "%s %x\n", p, sha256.Sum256(data))
			return nil
		})
	}
	return b.String() + r.git("for-each-ref")
}

// Reads read, for an agent on a host too: with no fetcher at work, agent
// ls, show, logs, checkpoint ls and host ls ask the host live and show
// that its agent finished, but write nothing here (no record, cache or ref) and start
// nothing; a land (an act) then fetches, catches up and lands.
func TestHostReadsRead(t *testing.T) {
	r := newHostRig(t)
	gate := filepath.Join(r.sshd.HostHome, "go-on")
	id := r.agency("agent", "start", "-w", "feat", "--host", "box", "--runner", "sh", "--headless", "--prompt",
		"while [ ! -e "+gate+" ]; do sleep 0.1; done; echo four > d.txt && git add d.txt && git commit -qm read-only")
	r.waitStatus(id, "running")
	r.eventually(30*time.Second, "the start's fetcher at work", func() bool { return len(r.fetcherPIDs()) == 1 })
	r.killFetchers()
	os.WriteFile(gate, nil, 0o644)
	r.eventually(60*time.Second, "the agent finished on the host", func() bool { return r.hostRecord(id)["status"] == "finished" })
	before := r.snapshot()
	var shown map[string]any
	json.Unmarshal([]byte(r.agency("agent", "show", id, "--json")), &shown)
	if shown["status"] != "finished" {
		t.Fatalf("show does not say what the host says: %v", shown["status"])
	}
	if ls := r.agency("agent", "ls"); !strings.Contains(ls, id) || strings.Contains(ls, "running") {
		t.Fatalf("agent ls: %s", ls)
	}
	r.agency("agent", "show", id)
	r.agency("agent", "logs", id)
	r.agency("checkpoint", "ls", "--invocation", id)
	if out := r.agency("host", "ls"); !strings.Contains(out, "reachable") {
		t.Fatalf("host ls: %s", out)
	}
	if after := r.snapshot(); after != before {
		t.Fatalf("a read wrote:\nbefore:\n%s\nafter:\n%s", before, after)
	}
	if p := r.fetcherPIDs(); len(p) != 0 {
		t.Fatalf("a read started a fetcher: %v", p)
	}
	r.agency("agent", "land", id)
	if b, err := os.ReadFile(filepath.Join(r.wt, "d.txt")); err != nil || string(b) != "four\n" {
		t.Fatalf("the land did not fetch and land the host's work: %q %v", b, err)
	}
}

// killMasters kills this rig's ssh ControlMasters (the connection
// dropped); it fails the test when there is none.
func (r *hostRig) killMasters() {
	r.t.Helper()
	ms := r.masterPIDs()
	if len(ms) == 0 {
		r.t.Fatal("no ControlMaster to kill")
	}
	for _, p := range ms {
		syscall.Kill(p, syscall.SIGKILL)
	}
}

// masterPIDs are the ssh ControlMaster processes of this rig's client
// (their title names the control socket, under the rig's control dir).
func (r *hostRig) masterPIDs() []int {
	dir := host.ControlDirFor(r.local)
	var out []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		c := string(b)
		if strings.HasPrefix(c, "ssh: "+dir+"/") && strings.Contains(c, "[mux]") {
			out = append(out, pid)
		}
	}
	return out
}

// The connection killed in the middle of a fetch (the fetch paused on the
// host by a failpoint, its ControlMaster killed): the agent finishes on
// the host, views answer within 5 s, and the fetch made again over a new
// connection brings its outcome and commits, which land.
func TestHostKillMidFetch(t *testing.T) {
	r := newHostRig(t)
	pause := filepath.Join(r.sshd.HostHome, "pause-fetch")
	r.env = append(r.env, "AGENCY_FAILPOINT=host:fetch-pause="+pause)
	gate := filepath.Join(r.sshd.HostHome, "go-on")
	id := r.agency("agent", "start", "-w", "feat", "--host", "box", "--runner", "sh", "--headless", "--prompt",
		"while [ ! -e "+gate+" ]; do sleep 0.1; done; echo five > e.txt && git add e.txt && git commit -qm mid-fetch")
	r.waitStatus(id, "running")
	os.WriteFile(pause, nil, 0o644)
	os.WriteFile(gate, nil, 0o644)
	r.eventually(60*time.Second, "a fetch paused on the host", func() bool {
		_, err := os.Stat(pause + ".reached")
		return err == nil
	})
	r.killMasters()
	for _, args := range [][]string{{"host", "ls"}, {"agent", "ls"}} {
		start := time.Now()
		r.run(args...)
		if d := time.Since(start); d > 5*time.Second {
			t.Fatalf("%v took %v with the connection killed", args, d)
		}
	}
	os.Remove(pause)
	r.eventually(60*time.Second, "the agent finished on the host", func() bool { return r.hostRecord(id)["status"] == "finished" })
	r.waitStatus(id, "finished")
	if got := r.git("log", "-1", "--format=%s", "agency/sandbox-"+id); got != "mid-fetch" {
		t.Fatalf("commits not fetched after the connection came back: %q", got)
	}
	r.agency("agent", "land", id)
	if _, err := os.Stat(filepath.Join(r.wt, "e.txt")); err != nil {
		t.Fatal("not landed after the killed fetch")
	}
}

// A host that does not come back: after agency.host.<name>.lostAfter its
// run reads `host lost` (its fetcher gives up), and the work last fetched
// lands.
func TestHostLostAfter(t *testing.T) {
	r := newHostRig(t)
	r.git("config", "agency.host.box.lostAfter", "2s")
	id := r.agency("agent", "start", "-w", "feat", "--host", "box", "--runner", "sh", "--headless", "--prompt",
		"echo six > f.txt && git add f.txt && git commit -qm before-loss; exec sleep 600")
	r.eventually(60*time.Second, "the agent's commit fetched", func() bool {
		return r.hasRef("agency/sandbox-"+id) && r.git("log", "-1", "--format=%s", "agency/sandbox-"+id) == "before-loss"
	})
	r.sshd.Stop()
	r.eventually(30*time.Second, "agent ls says host lost", func() bool {
		out, _ := r.run("agent", "ls")
		return strings.Contains(out, "host lost")
	})
	r.eventually(30*time.Second, "the fetcher gave up", func() bool { return len(r.fetcherPIDs()) == 0 })
	var shown map[string]any
	json.Unmarshal([]byte(r.agency("agent", "show", id, "--json")), &shown)
	r.agency("agent", "land", id)
	if b, err := os.ReadFile(filepath.Join(r.wt, "f.txt")); err != nil || string(b) != "six\n" {
		t.Fatalf("the last fetched work did not land: %q %v", b, err)
	}
	json.Unmarshal([]byte(r.agency("agent", "show", id, "--json")), &shown)
	if e, _ := shown["error"].(string); !strings.Contains(e, "host lost") {
		t.Fatalf("the record does not say the host was lost: %v", shown)
	}
	// The agent still runs on the host: end it (the test ends what it started).
	r.sshd.Restart()
	r.agency("agent", "kill", id)
}

// agency.host.<name>.maxActive holds on the host: with 1, a second start
// waits in the host's own queue (queued here too), and starts there when
// the first ends; both come back.
func TestHostMaxActive(t *testing.T) {
	r := newHostRig(t)
	r.git("config", "agency.host.box.maxActive", "1")
	gate := filepath.Join(r.sshd.HostHome, "go-on")
	first := r.agency("agent", "start", "-w", "feat", "--host", "box", "--runner", "sh", "--headless", "--prompt",
		"while [ ! -e "+gate+" ]; do sleep 0.1; done; echo 1 > g1.txt && git add g1.txt && git commit -qm first")
	r.waitStatus(first, "running")
	second := r.agency("agent", "start", "-w", "feat", "--host", "box", "--runner", "sh", "--headless", "--prompt",
		"echo 2 > g2.txt && git add g2.txt && git commit -qm second")
	if st := r.hostRecord(second)["status"]; st != "queued" {
		t.Fatalf("the second start is %v on the host, not queued", st)
	}
	if ls := r.agency("agent", "ls"); !strings.Contains(ls, second) || !strings.Contains(ls, "queued") {
		t.Fatalf("agent ls does not show the queued start: %s", ls)
	}
	os.WriteFile(gate, nil, 0o644)
	r.waitStatus(first, "finished")
	r.waitStatus(second, "finished")
	if got := r.git("log", "-1", "--format=%s", "agency/sandbox-"+second); got != "second" {
		t.Fatalf("the queued agent's work not fetched: %q", got)
	}
	r.agency("agent", "land", second)
	if _, err := os.Stat(filepath.Join(r.wt, "g2.txt")); err != nil {
		t.Fatal("the queued agent's work did not land")
	}
}
