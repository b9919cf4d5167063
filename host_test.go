package gitagency_test

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

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
	t.Cleanup(func() {
		// The client's master connection, and every agent the host still runs.
		exec.Command("ssh", "-F", s.ClientConfig, "-o", "ControlPath="+filepath.Join(r.local, "cm", "*"), "-O", "exit", s.Alias).Run()
		ms, _ := filepath.Glob(filepath.Join(r.local, "cm", "*"))
		for _, m := range ms {
			exec.Command("ssh", "-F", s.ClientConfig, "-o", "ControlPath="+m, "-O", "exit", s.Alias).Run()
		}
	})
	return r
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
	for _, args := range [][]string{{"host", "ls"}, {"agent", "ls"}} {
		start := time.Now()
		out, _ := r.run(args...)
		if d := time.Since(start); d > 5*time.Second {
			t.Fatalf("%v took %v while the host was down", args, d)
		}
		if !strings.Contains(out, "unreachable since") {
			t.Fatalf("%v does not say the host is unreachable: %s", args, out)
		}
	}
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
