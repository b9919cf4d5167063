package gitagency_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/git-agency/git-agency/internal/sshdtest"
	"github.com/git-agency/git-agency/internal/testenv"
)

// addHost adds a second host, name, behind an sshd of its own (its own
// HOME, data directory and git-agency install), to the rig's ssh config.
func (r *hostRig) addHost(name string) *sshdtest.Sshd {
	r.t.Helper()
	s := sshdtest.Start(r.t)
	ident, err := os.ReadFile(filepath.Join(r.sshd.HostHome, ".gitconfig"))
	if err != nil {
		r.t.Fatal(err)
	}
	os.WriteFile(filepath.Join(s.HostHome, ".gitconfig"), ident, 0o600)
	os.MkdirAll(filepath.Join(s.HostHome, ".local", "bin"), 0o755)
	copyFile(r.t, r.bin, filepath.Join(s.HostHome, ".local", "bin", "git-agency"))
	first, _ := os.ReadFile(r.sshd.ClientConfig)
	second, _ := os.ReadFile(s.ClientConfig)
	both := filepath.Join(r.sshd.Dir, "client", "both")
	text := string(first) + strings.Replace(string(second), "Host "+s.Alias+"\n", "Host "+name+"\n", 1)
	if err := os.WriteFile(both, []byte(text), 0o600); err != nil {
		r.t.Fatal(err)
	}
	r.git("config", "agency.host.sshConfig", both)
	r.git("config", "agency.host."+name+".ssh", name)
	return s
}

// fakeRunner configures the runner fclaude: the test agent speaking
// claude's stream, resumable (agent send), at its absolute path (the
// host's sessions do not have the tests' PATH).
func (r *hostRig) fakeRunner() {
	r.git("config", "agency.runner.fclaude.command", filepath.Join(binDir, "fakeagent"))
	r.git("config", "agency.runner.fclaude.format", "claude")
	r.git("config", "--add", "agency.runner.fclaude.headlessArg", "-stream")
	r.git("config", "--add", "agency.runner.fclaude.headlessArg", "claude")
	r.git("config", "--add", "agency.runner.fclaude.resumeArg", "-resume")
	r.git("config", "--add", "agency.runner.fclaude.resumeArg", "{session_id}")
}

func (r *hostRig) show(id string) map[string]any {
	r.t.Helper()
	var rec map[string]any
	out := r.agency("agent", "show", id, "--json")
	if err := json.Unmarshal([]byte(out), &rec); err != nil {
		r.t.Fatalf("agent show %s: %v: %s", id, err, out)
	}
	return rec
}

// waitBranch polls `agent ls` (which reads what the host's fetcher fetched) until
// the sandbox branch of id has a commit with subject want.
func (r *hostRig) waitBranch(id, want string) {
	r.t.Helper()
	deadline := time.Now().Add(120 * time.Second)
	for {
		r.run("agent", "ls")
		if out, _ := r.gitTry("log", "--format=%s", "agency/sandbox-"+id); strings.Contains(out, want) {
			return
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("%s: commit %q never fetched", id, want)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func (r *hostRig) gitTry(args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir, cmd.Env = r.repo, r.env
	out, err := cmd.Output()
	return strings.TrimSpace(string(out)), err
}

// agent send of an agent on a host: the host resumes its conversation,
// the new turn's output streams here, the record here catches up (turns,
// outcome) and the turn's commits come back as refs.
func TestHostSendResumes(t *testing.T) {
	r := newHostRig(t)
	r.fakeRunner()
	id := r.agency("agent", "start", "-w", "feat", "--host", "box", "--runner", "fclaude", "--headless",
		"--runner-arg=-append", `--runner-arg=hello.txt=hi\n`, "--runner-arg=-commit", "--runner-arg=turn", "--prompt", "Create hello.txt")
	r.waitStatus(id, "finished")
	out := r.agency("agent", "send", id, "--prompt", "What did I ask first?")
	if !strings.Contains(out, "RECALL: first prompt was <<Create hello.txt>>; 2 user prompts in history") {
		t.Fatalf("the host did not resume the conversation, or its output did not come here: %s", out)
	}
	rec := r.show(id)
	if rec["status"] != "finished" || rec["turns"] != float64(2) || rec["host"] != "box" {
		t.Fatalf("record here did not catch up: status %v turns %v host %v", rec["status"], rec["turns"], rec["host"])
	}
	if got := r.git("rev-list", "--count", rec["base_commit"].(string)+"..agency/sandbox-"+id); got != "2" {
		t.Fatalf("the second turn's commit did not come back: %s commits", got)
	}
	// Detached: the record here reads running until the host says the
	// turn ended, then catches up.
	r.agency("agent", "send", id, "-d", "--prompt", "Once more")
	r.waitStatus(id, "finished")
	if rec := r.show(id); rec["turns"] != float64(3) {
		t.Fatalf("detached send: turns %v", rec["turns"])
	}
	r.agency("agent", "land", id)
	if b, _ := os.ReadFile(filepath.Join(r.wt, "hello.txt")); string(b) != "hi\nhi\nhi\n" {
		t.Fatalf("landed hello.txt: %q", b)
	}
	// Landing is this side's: the host does not know, this side refuses.
	if out, err := r.run("agent", "send", id, "--prompt", "more"); err == nil || !strings.Contains(out, "E_ALREADY_LANDED") {
		t.Fatalf("send after the land: %v %s", err, out)
	}
}

// agent send ID --host OTHER: a run whose host went away continues on
// another host from its last fetched branch; landing the new run carries
// both runs' commits.
func TestHostSendElsewhere(t *testing.T) {
	r := newHostRig(t)
	r.addHost("box2")
	gate := filepath.Join(r.sshd.HostHome, "never")
	id := r.agency("agent", "start", "-w", "feat", "--host", "box", "--runner", "sh", "--headless", "--prompt",
		"echo first > f.txt && git add f.txt && git commit -qm first && while [ ! -e "+gate+" ]; do sleep 0.2; done")
	r.waitBranch(id, "first")
	r.sshd.Stop()
	out, err := r.run("agent", "send", id, "--host", "box2", "--prompt",
		"echo second > s.txt && git add s.txt && git commit -qm second")
	if err != nil {
		t.Fatalf("send --host box2: %v\n%s", err, out)
	}
	next := strings.TrimSpace(out)
	if next == id {
		t.Fatal("the continued run has the old id")
	}
	rec := r.waitStatus(next, "finished")
	if rec["host"] != "box2" {
		t.Fatalf("continued on %v, not box2", rec["host"])
	}
	r.agency("agent", "land", next)
	for _, f := range []string{"f.txt", "s.txt"} {
		if _, err := os.Stat(filepath.Join(r.wt, f)); err != nil {
			t.Fatalf("%s not landed: the continued run did not carry both runs' work", f)
		}
	}
	// The same, here: --host local.
	r.sshd.Restart()
	id2 := r.agency("agent", "start", "-w", "feat", "--host", "box", "--runner", "sh", "--headless", "--prompt",
		"echo third > t.txt && git add t.txt && git commit -qm third")
	r.waitStatus(id2, "finished")
	local := r.agency("agent", "send", id2, "--host", "local", "--prompt", "echo fourth > u.txt && git add u.txt && git commit -qm fourth")
	rec = r.waitStatus(local, "finished")
	if rec["host"] != nil {
		t.Fatalf("--host local ran on %v", rec["host"])
	}
	if got := r.git("log", "--format=%s", rec["base_commit"].(string)+"..agency/sandbox-"+local); got != "fourth\nthird" {
		t.Fatalf("local continuation's branch: %q", got)
	}
}

// checkpoint ls and apply (rollback) of an agent on a host act there;
// the checkpoint refs come back under their usual names.
func TestHostCheckpoints(t *testing.T) {
	r := newHostRig(t)
	id := r.agency("agent", "start", "-w", "feat", "--host", "box", "--runner", "sh", "--headless", "--prompt",
		"echo one > w.txt")
	r.waitStatus(id, "finished")
	out := r.agency("checkpoint", "ls", "--invocation", id)
	if !strings.Contains(out, "exit") {
		t.Fatalf("checkpoint ls of the host's run: %s", out)
	}
	// checkpoint ls only reads: the ref comes with the host's fetcher,
	// which may fetch after the view read the finish.
	deadline := time.Now().Add(120 * time.Second)
	for {
		if _, err := r.gitTry("rev-parse", "--verify", "refs/agency/snapshots/"+id+"/1"); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the exit checkpoint's ref was not fetched")
		}
		time.Sleep(200 * time.Millisecond)
	}
	trees, _ := filepath.Glob(filepath.Join(r.sshd.HostHome, ".local/share/agency/repos/*/sandboxes", id, "tree"))
	if len(trees) != 1 {
		t.Fatal("no sandbox on the host")
	}
	w := filepath.Join(trees[0], "w.txt")
	os.WriteFile(w, []byte("changed\n"), 0o644)
	out = r.agency("checkpoint", "apply", "--invocation", id, "1")
	if !strings.Contains(out, "restored checkpoint 1") {
		t.Fatalf("rollback: %s", out)
	}
	if b, _ := os.ReadFile(w); string(b) != "one\n" {
		t.Fatalf("the host's sandbox was not rolled back: %q", b)
	}
	// The state before the rollback, saved there, came back as a ref.
	if _, err := r.gitTry("rev-parse", "--verify", "refs/agency/snapshots/"+id+"/2"); err != nil {
		t.Fatal("the rollback's undo checkpoint was not fetched")
	}
	var ls struct {
		Checkpoints []map[string]any `json:"checkpoints"`
	}
	json.Unmarshal([]byte(r.agency("checkpoint", "ls", "--invocation", id, "--json")), &ls)
	if len(ls.Checkpoints) != 2 {
		t.Fatalf("checkpoint ls --json: %v", ls)
	}
	// Its host gone: the checkpoints fetched here are listed.
	r.sshd.Stop()
	out, err := r.run("checkpoint", "ls", "--invocation", id, "--json")
	ls.Checkpoints = nil
	if json.Unmarshal([]byte(out), &ls); err != nil || len(ls.Checkpoints) != 2 || ls.Checkpoints[1]["snapshot_ref"] != "refs/agency/snapshots/"+id+"/2" {
		t.Fatalf("checkpoint ls with the host gone: %v %s", err, out)
	}
}

// land --apply of an agent on a host that left work uncommitted: the host
// makes it a commit, this side fetches it and lands it with the commits.
func TestHostLandApply(t *testing.T) {
	r := newHostRig(t)
	id := r.agency("agent", "start", "-w", "feat", "--host", "box", "--runner", "sh", "--headless", "--prompt",
		"echo c > c.txt && git add c.txt && git commit -qm committed && echo u > u.txt")
	r.waitStatus(id, "finished")
	r.agency("agent", "land", "--apply", id)
	for _, f := range []string{"c.txt", "u.txt"} {
		if _, err := os.Stat(filepath.Join(r.wt, f)); err != nil {
			t.Fatalf("%s not landed", f)
		}
	}
	if _, err := r.gitTry("rev-parse", "--verify", "refs/agency/apply/"+id); err != nil {
		t.Fatal("the host's commit of the uncommitted work was not fetched")
	}
	cmd := exec.Command("git", "log", "-1", "--format=%B")
	cmd.Dir, cmd.Env = r.wt, r.env
	if out, _ := cmd.Output(); !strings.Contains(string(out), "Agency-Invocation: "+id) {
		t.Fatalf("the applied commit: %s", out)
	}
}

// agent attach of a headed agent on a host: ssh -t runs the host's
// attach, whose tmux client joins the agent's session there; detaching
// returns here with the agent still running.
func TestHostAttach(t *testing.T) {
	testenv.Need(t, "tmux")
	script := testenv.Need(t, "script")
	r := newHostRig(t)
	r.fakeRunner()
	id := r.agency("agent", "start", "-w", "feat", "--host", "box", "--runner", "fclaude", "-d",
		"--runner-arg=-interactive", "--prompt", "hi")
	r.waitStatus(id, "running")
	cmd := exec.Command(script, "-qec", r.bin+" agent attach "+id, "/dev/null")
	cmd.Dir, cmd.Env = r.repo, append(r.env, "TERM=xterm")
	stdin, _ := cmd.StdinPipe()
	defer stdin.Close()
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	defer func() {
		cmd.Process.Kill()
	}()
	hostTmux := func(args ...string) string {
		c := exec.Command("tmux", args...)
		c.Env = append(os.Environ(), "TMUX=", "TMUX_TMPDIR="+r.sshd.TmuxDir())
		b, _ := c.CombinedOutput()
		return string(b)
	}
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(hostTmux("list-clients", "-t", "agency-"+id), "agency-"+id) {
		select {
		case err := <-done:
			t.Fatalf("attach ended before joining the host's session: %v\n%s", err, out.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("no client on the host's session: %s", out.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	hostTmux("detach-client", "-s", "agency-"+id)
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("attach after detaching: %v\n%s", err, out.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("attach did not return after the detach: %s", out.String())
	}
	if rec := r.show(id); rec["status"] != "running" {
		t.Fatalf("the agent did not run on after the detach: %v", rec["status"])
	}
	r.agency("agent", "kill", id)
}
