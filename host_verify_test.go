package gitagency_test

import (
	"bytes"
	"fmt"
	"hash/fnv"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/git-agency/git-agency/host"
	"github.com/git-agency/git-agency/internal/testenv"
)

// alias adds name as a second host name for the rig's sshd (one machine,
// one mirror, a connection of its own), as bench/host.bench.sh does.
func (r *hostRig) alias(name string) {
	r.t.Helper()
	cfg, err := os.ReadFile(r.sshd.ClientConfig)
	if err != nil {
		r.t.Fatal(err)
	}
	both := filepath.Join(r.sshd.Dir, "client", "aliases")
	text := string(cfg) + strings.Replace(string(cfg), "Host "+r.sshd.Alias+"\n", "Host "+name+"\n", 1)
	if err := os.WriteFile(both, []byte(text), 0o600); err != nil {
		r.t.Fatal(err)
	}
	r.git("config", "agency.host.sshConfig", both)
	r.git("config", "agency.host."+name+".ssh", name)
}

// runErr runs git-agency and returns its stdout and stderr apart.
func (r *hostRig) runErr(args ...string) (string, string, error) {
	cmd := exec.Command(r.bin, args...)
	var out, errb bytes.Buffer
	cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = r.repo, r.env, &out, &errb
	err := cmd.Run()
	return out.String(), errb.String(), err
}

// finished starts an agent of feat (here) that commits file, and waits
// for it.
func (r *hostRig) finished(file string, extra string) string {
	r.t.Helper()
	id := r.agency("agent", "start", "-w", "feat", "--runner", "sh", "--headless", "--prompt",
		"echo "+file+" > "+file+" "+extra+"&& git add -A && git commit -qm "+file)
	r.waitStatus(id, "finished")
	return id
}

// noVerifyLeft: no verify tree here (but a failed one's, kept for
// inspection), no refs/agency/verify/* here, doctor clean of verify trees.
func (r *hostRig) noVerifyLeft(failed ...string) {
	r.t.Helper()
	ts, _ := filepath.Glob(filepath.Join(r.local, "repos", "*", "verify", "*"))
	for _, tree := range ts {
		if !slices.Contains(failed, filepath.Base(tree)) {
			r.t.Fatalf("verify trees left here: %v", ts)
		}
	}
	if refs := r.git("for-each-ref", "refs/agency/verify/"); refs != "" {
		r.t.Fatalf("verify refs left here: %s", refs)
	}
	if out, err := r.run("doctor"); err != nil || strings.Contains(out, "verify tree") {
		r.t.Fatalf("doctor after the land: %v\n%s", err, out)
	}
}

// land --batch with two hosts (two names of one sshd): the top of the
// stack and a prefix below it are checked at once, each on its own host
// (the check waits, bounded, until two checks run, and fails alone), with
// the repo lock free while they run; the bisection that follows finds the
// same green prefix and culprit as one check at a time, and each record
// says where its own check ran.
func TestHostVerifySpread(t *testing.T) {
	testenv.Need(t, "flock")
	r := newHostRig(t)
	r.alias("box2")
	i1, i2 := r.finished("f1.txt", ""), r.finished("f2.txt", "")
	i3, i4 := r.finished("f3.txt", "&& echo r > red.txt "), r.finished("f4.txt", "")
	locks, _ := filepath.Glob(filepath.Join(r.local, "repos", "*", ".lock"))
	if len(locks) != 1 {
		t.Fatalf("the repo lock: %v", locks)
	}

	met := filepath.Join(t.TempDir(), "met")
	os.MkdirAll(met, 0o755)
	r.git("config", "agency.verify.hosts", "box,box2")
	r.git("config", "agency.verify", "flock -n "+locks[0]+" true || { echo the repo lock is held; exit 4; }; "+
		"touch "+met+"/$$; i=0; while [ ! -e "+met+"/done ] && [ $(ls "+met+" | wc -l) -lt 2 ]; do "+
		"i=$((i+1)); [ $i -gt 3600 ] && { echo checked alone; exit 3; }; sleep 0.05; done; touch "+met+"/done; "+
		"echo checked-on $HOME; test ! -f red.txt")
	out, _, err := r.runErr("agent", "land", "--batch", "4", i1, i2, i3, i4)
	if err == nil {
		t.Fatalf("a red stack landed whole: %s", out)
	}
	for id, want := range map[string]string{i1: "landed", i2: "landed", i3: "verify failed", i4: "landed"} {
		if !regexpLine(out, id, want) {
			t.Fatalf("%s is not %s:\n%s", id, want, out)
		}
	}
	if got := r.git("-C", r.wt, "log", "--format=%s", "-3"); got != "f4.txt\nf2.txt\nf1.txt" {
		t.Fatalf("landed: %q", got)
	}

	// i4 (the top) and i2 (the prefix below it) were checked at once,
	// each on its own host; i2 keeps its own pass; i1 passed as part of
	// i2's prefix; i3 failed.
	s2, s3 := r.show(i2), r.show(i3)
	// It starts at box2; only a box2 that did not answer (a loaded
	// machine: its hello is time-bounded) sends it on to box, and says so.
	ev2, _ := filepath.Glob(filepath.Join(r.local, "repos", "*", "invocations", i2, "events.jsonl"))
	b, _ := os.ReadFile(ev2[0])
	movedOn := s2["verify_host"] == "box" && strings.Contains(string(b), `"verify_host_lost"`) && strings.Contains(string(b), `"host":"box2"`)
	if s2["verify_status"] != "passed" || (s2["verify_host"] != "box2" && !movedOn) || s2["verified_as_part_of"] != nil {
		t.Fatalf("the prefix checked beside the top: %v %v %v\n%s", s2["verify_status"], s2["verify_host"], s2["verified_as_part_of"], b)
	}
	if s1 := r.show(i1); s1["verified_as_part_of"] != s2["verify_commit"] {
		t.Fatalf("i1 passed as part of i2's prefix: %v", s1["verified_as_part_of"])
	}
	if s3["verify_status"] != "failed" || s3["verify_host"] == nil {
		t.Fatalf("the culprit: %v on %v", s3["verify_status"], s3["verify_host"])
	}
	ev, _ := filepath.Glob(filepath.Join(r.local, "repos", "*", "invocations", i4, "events.jsonl"))
	if b, _ := os.ReadFile(ev[0]); !strings.Contains(string(b), `"host":"box"`) || strings.Contains(string(b), `"exit_code":3`) {
		t.Fatalf("the top's first check did not run on box beside another: %s", b)
	}
	if log := r.agency("agent", "logs", "--verify", i2); !strings.Contains(log, fmt.Sprint("ran on host ", s2["verify_host"])) || !strings.Contains(log, "checked-on "+r.sshd.HostHome) {
		t.Fatalf("i2's log: %s", log)
	}
	r.noVerifyLeft(i3)
}

// regexpLine: out has a line for id (land's "ID  OUTCOME[ (HEAD …)][: error]")
// whose outcome is want. Not merely a line that mentions want: a verify
// failure's message says "nothing was landed".
func regexpLine(out, id, want string) bool {
	for _, l := range strings.Split(out, "\n") {
		rest, ok := strings.CutPrefix(l, id)
		if !ok {
			continue
		}
		rest, ok = strings.CutPrefix(strings.TrimLeft(rest, " "), want)
		if ok && (rest == "" || strings.HasPrefix(rest, " (") || strings.HasPrefix(rest, ":")) {
			return true
		}
	}
	return false
}

// gatedCheck is a check whose first run (on whichever host) says where it
// runs and waits for go before it checks; the runs after it check at once.
func gatedCheck(dir string) string {
	return "if mkdir " + dir + "/first 2>/dev/null; then echo $HOME > " + dir + "/where; " +
		"while [ ! -e " + dir + "/go ]; do sleep 0.05; done; fi; echo checked-in $PWD; test -f v.txt"
}

// A check lost with its host in the middle (the host's sshd stopped while
// the check runs there) runs again on the other host; the land completes,
// says so, and leaves nothing half-made here.
func TestHostVerifyLostMidCheck(t *testing.T) {
	r := newHostRig(t)
	other := r.addHost("box2")
	gate := r.tempDir()
	r.git("config", "agency.verify.hosts", "box,box2")
	r.git("config", "agency.verify", gatedCheck(gate))
	id := r.finished("v.txt", "")

	type result struct {
		stderr string
		err    error
	}
	done := make(chan result, 1)
	go func() {
		_, stderr, err := r.runErr("agent", "land", id)
		done <- result{stderr, err}
	}()
	r.eventually(60*time.Second, "the check running on a host", func() bool {
		b, _ := os.ReadFile(filepath.Join(gate, "where"))
		return strings.HasSuffix(string(b), "\n")
	})
	where, _ := os.ReadFile(filepath.Join(gate, "where"))
	lost, next, nextHome := "box", "box2", other.HostHome
	if strings.TrimSpace(string(where)) == other.HostHome {
		lost, next, nextHome = "box2", "box", r.sshd.HostHome
		other.Stop()
	} else {
		r.sshd.Stop()
	}

	res := <-done
	os.WriteFile(filepath.Join(gate, "go"), nil, 0o644) // the lost check ends too
	if res.err != nil || !strings.Contains(res.stderr, "the check could not run on host "+lost) {
		t.Fatalf("the land with its check's host lost: %v\n%s", res.err, res.stderr)
	}
	if _, err := os.Stat(filepath.Join(r.wt, "v.txt")); err != nil {
		t.Fatal("not landed")
	}
	s := r.show(id)
	if s["verify_status"] != "passed" || s["verify_host"] != next {
		t.Fatalf("the record: %v on %v", s["verify_status"], s["verify_host"])
	}
	if log := r.agency("agent", "logs", "--verify", id); !strings.Contains(log, "ran on host "+next) || !strings.Contains(log, "checked-in "+nextHome) {
		t.Fatalf("the check did not run again on %s: %s", next, log)
	}
	r.noVerifyLeft()
	// The host that answered removed its verify tree; the lost check
	// removes its own once it ends.
	for _, home := range []string{r.sshd.HostHome, other.HostHome} {
		r.eventually(30*time.Second, "no verify tree left on "+home, func() bool {
			ts, _ := filepath.Glob(filepath.Join(home, ".local/share/agency/repos/*/verify/*"))
			return len(ts) == 0
		})
	}
}

// The connection killed in the middle of a check (its ControlMaster),
// with no other host: the check runs here, and the land completes.
func TestHostVerifyLostConnectionRunsHere(t *testing.T) {
	r := newHostRig(t)
	gate := r.tempDir()
	r.git("config", "agency.verify.hosts", "box")
	r.git("config", "agency.verify", gatedCheck(gate))
	id := r.finished("v.txt", "")

	done := make(chan string, 1)
	go func() {
		_, stderr, err := r.runErr("agent", "land", id)
		if err != nil {
			stderr += "\nfailed: " + err.Error()
		}
		done <- stderr
	}()
	r.eventually(60*time.Second, "the check running on the host", func() bool {
		_, err := os.Stat(filepath.Join(gate, "where"))
		return err == nil
	})
	r.killMasters()

	stderr := <-done
	os.WriteFile(filepath.Join(gate, "go"), nil, 0o644)
	if strings.Contains(stderr, "failed:") || !strings.Contains(stderr, "the check could not run on host box") {
		t.Fatalf("the land with its connection killed: %s", stderr)
	}
	s := r.show(id)
	if s["verify_status"] != "passed" || s["verify_host"] != nil || s["landing_status"] != "landed" {
		t.Fatalf("the record: %v on %v, %v", s["verify_status"], s["verify_host"], s["landing_status"])
	}
	if log := r.agency("agent", "logs", "--verify", id); strings.Contains(log, "ran on host") || !strings.Contains(log, "checked-in "+r.local) {
		t.Fatalf("the check did not run here: %s", log)
	}
	r.noVerifyLeft()
	r.eventually(30*time.Second, "no verify tree left on the host", func() bool {
		ts, _ := filepath.Glob(filepath.Join(r.sshd.HostHome, ".local/share/agency/repos/*/verify/*"))
		return len(ts) == 0
	})
}

// agency.isolate bwrap travels with the check: the host's git-agency
// walls it as it walls agents, so a check writing outside its verify tree
// (the host's HOME) cannot, and a normal check passes there.
func TestHostVerifyWalled(t *testing.T) {
	testenv.Need(t, "bwrap")
	r := newHostRig(t)
	id := r.finished("v.txt", "")
	r.git("config", "agency.verify.hosts", "box")
	r.git("config", "agency.isolate", "bwrap")
	escaped := filepath.Join(r.sshd.HostHome, "escaped")
	r.git("config", "agency.verify", "echo out > "+escaped+" && echo wrote-outside")
	out, err := r.run("agent", "land", id)
	if err == nil || !strings.Contains(out, "E_VERIFY_FAILED") {
		t.Fatalf("a check writing to the host's HOME passed: %v %s", err, out)
	}
	if _, err := os.Stat(escaped); err == nil {
		t.Fatal("the walled check wrote to the host's HOME")
	}
	if s := r.show(id); s["verify_host"] != "box" || s["verify_status"] != "failed" {
		t.Fatalf("the walled check did not run on the host: %v %v", s["verify_host"], s["verify_status"])
	}

	r.git("config", "agency.verify", "test -f v.txt && echo checked-in-the-wall")
	r.agency("agent", "land", id)
	if log := r.agency("agent", "logs", "--verify", id); !strings.Contains(log, "ran on host box") || !strings.Contains(log, "checked-in-the-wall") {
		t.Fatalf("the normal check on the host: %s", log)
	}
	if s := r.show(id); s["landing_status"] != "landed" {
		t.Fatalf("not landed: %v", s["landing_status"])
	}
}

// Two names of one machine share its mirror: a check lost with the first
// name's connection (its ControlMaster killed, the check still running
// there) runs again under the second name in the same mirror, and the
// lost run, ending while the new one still runs, leaves the new one's
// verify tree alone.
func TestHostVerifyLostSameMachine(t *testing.T) {
	r := newHostRig(t)
	r.alias("box2")
	g := r.tempDir()
	r.git("config", "agency.verify.hosts", "box,box2")
	r.git("config", "agency.verify", "if mkdir "+g+"/first 2>/dev/null; then touch "+g+"/first-running; "+
		"while [ ! -e "+g+"/go1 ]; do sleep 0.05; done; else touch "+g+"/second-running; "+
		"while [ ! -e "+g+"/go2 ]; do sleep 0.05; done; fi; test -f v.txt && echo checked-in $PWD")
	id := r.finished("v.txt", "")
	names := []string{"box", "box2"}
	sum := fnv.New32a()
	sum.Write([]byte(id))
	first := int(sum.Sum32() % 2)
	lost, next := names[first], names[1-first]

	done := make(chan string, 1)
	go func() {
		_, stderr, err := r.runErr("agent", "land", id)
		if err != nil {
			stderr += "\nfailed: " + err.Error()
		}
		done <- stderr
	}()
	exists := func(name string) func() bool {
		return func() bool { _, err := os.Stat(filepath.Join(g, name)); return err == nil }
	}
	r.eventually(60*time.Second, "the first check running", exists("first-running"))
	cfg := r.git("config", "agency.host.sshConfig")
	h := host.Host{Name: lost, Dest: r.git("config", "agency.host."+lost+".ssh"), ConfigFile: cfg, ControlDir: host.ControlDirFor(r.local)}
	killed := 0
	for _, p := range r.masterPIDs() {
		b, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(p), "cmdline"))
		if strings.Contains(string(b), h.ControlPath()) {
			syscall.Kill(p, syscall.SIGKILL)
			killed++
		}
	}
	if killed == 0 {
		t.Fatalf("no ControlMaster of %s to kill", lost)
	}

	r.eventually(60*time.Second, "the check running again on "+next, exists("second-running"))
	os.WriteFile(filepath.Join(g, "go1"), nil, 0o644)
	r.eventually(30*time.Second, "the lost check's host-serve ended", func() bool { return len(hostServeVerifies(r.sshd.Dir)) == 1 })
	os.WriteFile(filepath.Join(g, "go2"), nil, 0o644)

	stderr := <-done
	if strings.Contains(stderr, "failed:") || !strings.Contains(stderr, "the check could not run on host "+lost) {
		t.Fatalf("the land with %s's connection killed: %s", lost, stderr)
	}
	if s := r.show(id); s["verify_status"] != "passed" || s["verify_host"] != next || s["landing_status"] != "landed" {
		t.Fatalf("the record: %v on %v, %v", s["verify_status"], s["verify_host"], s["landing_status"])
	}
	r.noVerifyLeft()
	r.eventually(30*time.Second, "no verify tree left on the host", func() bool {
		ts, _ := filepath.Glob(filepath.Join(r.sshd.HostHome, ".local/share/agency/repos/*/verify/*"))
		return len(ts) == 0
	})
}

// hostServeVerifies are the live `host-serve verify` processes of the
// git-agency installed under dir.
func hostServeVerifies(dir string) []int {
	var out []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || zombie(pid) {
			continue
		}
		b, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		exe, _ := os.Readlink(filepath.Join("/proc", e.Name(), "exe"))
		if strings.HasPrefix(exe, dir+"/") && strings.Contains(string(b), "host-serve\x00verify") {
			out = append(out, pid)
		}
	}
	return out
}
