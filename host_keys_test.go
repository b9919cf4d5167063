package gitagency_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/git-agency/git-agency/agency"
	"github.com/git-agency/git-agency/watch"
)

// gc of a run its host discarded: the fetched copies of its refs go at
// the next gc here (no age, no --force), and the same gc runs in the
// host's mirror with the same choices.
func TestHostGC(t *testing.T) {
	r := newHostRig(t)
	id := r.agency("agent", "start", "-w", "feat", "--host", "box", "--runner", "sh", "--headless", "--prompt",
		"echo c > c.txt && git add c.txt && git commit -qm committed && echo u > u.txt")
	r.waitStatus(id, "finished")
	for _, ref := range []string{"refs/heads/agency/sandbox-" + id, "refs/agency/snapshots/" + id + "/1"} {
		if _, err := r.gitTry("rev-parse", "--verify", ref); err != nil {
			t.Fatalf("%s was not fetched", ref)
		}
	}
	r.agency("agent", "discard", id)
	out := r.agency("gc", "--yes")
	if !strings.Contains(out, "host box:") {
		t.Fatalf("gc did not run on the host: %s", out)
	}
	for _, ref := range []string{"refs/heads/agency/sandbox-" + id, "refs/agency/snapshots/" + id + "/1"} {
		if _, err := r.gitTry("rev-parse", "--verify", ref); err == nil {
			t.Fatalf("gc left the fetched copy %s of a discarded run:\n%s", ref, out)
		}
	}
	mirrors, _ := filepath.Glob(filepath.Join(r.sshd.HostHome, ".local/share/agency/mirrors/*"))
	if len(mirrors) != 1 {
		t.Fatalf("mirrors on the host: %v", mirrors)
	}
	hostRef := func() error {
		cmd := exec.Command("git", "-C", mirrors[0], "rev-parse", "--verify", "refs/heads/agency/sandbox-"+id)
		cmd.Env = r.env
		return cmd.Run()
	}
	if hostRef() != nil {
		t.Fatal("the host's gc removed a branch discarded less than 30 days ago")
	}
	out = r.agency("gc", "--yes", "--older-than", "0s", "--force")
	if hostRef() == nil {
		t.Fatalf("gc --older-than 0s --force did not reach the host's mirror: %s", out)
	}
}

// The user's notify command runs here for the events of an agent on a
// host, when they are fetched: needs input, and its end.
func TestHostNotify(t *testing.T) {
	r := newHostRig(t)
	r.fakeRunner()
	notes := filepath.Join(r.tempDir(), "notes")
	r.git("config", "agency.notify.command", "cat >> "+notes)
	id := r.agency("agent", "start", "-w", "feat", "--host", "box", "--runner", "fclaude", "-d",
		"--runner-arg=-runner-status", "--runner-arg=needs_input:Which file?", "--runner-arg=-interactive", "--prompt", "hi")
	deadline := time.Now().Add(120 * time.Second)
	for {
		r.run("agent", "ls")
		b, _ := os.ReadFile(notes)
		if strings.Contains(string(b), `"event":"needs_input"`) {
			if !strings.Contains(string(b), `"invocation_id":"`+id+`"`) || !strings.Contains(string(b), `"worktree":"feat"`) {
				t.Fatalf("needs_input notification: %s", b)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no needs_input notification here: %q", b)
		}
		time.Sleep(200 * time.Millisecond)
	}
	r.agency("agent", "kill", id)
	id2 := r.agency("agent", "start", "-w", "feat", "--host", "box", "--runner", "sh", "--headless", "--prompt", "true")
	r.waitStatus(id2, "finished")
	// The fetcher notifies once it caught the record up, just after the
	// host's word that views read.
	r.eventually(60*time.Second, "a finished notification for "+id2, func() bool {
		b, _ := os.ReadFile(notes)
		return strings.Contains(string(b), `"event":"finished","invocation_id":"`+id2+`"`)
	})
	b, _ := os.ReadFile(notes)
	if n := strings.Count(string(b), `"invocation_id":"`+id2+`"`); n != 1 {
		t.Fatalf("%d notifications of one end", n)
	}
	// A follow-up the host refuses (sh cannot resume): the record here is
	// back as it was, and that end is not notified again.
	if out, err := r.run("agent", "send", id2, "--prompt", "again"); err == nil || !strings.Contains(out, "E_NO_RESUME") {
		t.Fatalf("send to a runner that cannot resume: %v %s", err, out)
	}
	if rec := r.show(id2); rec["status"] != "finished" {
		t.Fatalf("after the refused send the record says %v", rec["status"])
	}
	r.run("agent", "ls")
	b, _ = os.ReadFile(notes)
	if n := strings.Count(string(b), `"invocation_id":"`+id2+`"`); n != 1 {
		t.Fatalf("a refused send notified its old end again: %s", b)
	}
}

// watch's rows of agents on hosts show their host, and its keys act on
// the host: stop, discard (watch calls agency.App as the commands do).
func TestHostWatchKeys(t *testing.T) {
	r := newHostRig(t)
	for _, kv := range r.env {
		k, v, _ := strings.Cut(kv, "=")
		switch k {
		case "HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "GIT_CONFIG_NOSYSTEM", "AGENCY_DATA_DIR", "TZ", "LC_ALL":
			t.Setenv(k, v)
		}
	}
	id := r.agency("agent", "start", "-w", "feat", "--host", "box", "--runner", "sh", "--headless", "--prompt", "exec sleep 600")
	r.waitStatus(id, "running")
	ctx := context.Background()
	a, err := agency.Open(ctx, r.repo, nil)
	if err != nil {
		t.Fatal(err)
	}
	snap, err := watch.Load(ctx, a, false)
	if err != nil {
		t.Fatal(err)
	}
	var row *watch.InvocationRow
	for _, wt := range snap.Worktrees {
		for i := range wt.Invocations {
			if wt.Invocations[i].ID == id {
				row = &wt.Invocations[i]
			}
		}
	}
	if row == nil || row.Host != "box" || !strings.Contains(watch.Plain(snap, time.Now()), "headless@box") {
		t.Fatalf("watch's row does not show its host: %+v\n%s", row, watch.Plain(snap, time.Now()))
	}
	x := &watch.AgencyActions{App: a}
	msg, err := x.Stop(ctx, *row)
	if err != nil || !strings.Contains(msg, "stopped") {
		t.Fatalf("stop from watch: %q %v", msg, err)
	}
	if rec := r.show(id); rec["exit_reason"] != "stopped" {
		t.Fatalf("the host did not stop it: %v", rec["exit_reason"])
	}
	if msg, err := x.Discard(ctx, *row); err != nil || !strings.Contains(msg, "discarded") {
		t.Fatalf("discard from watch: %q %v", msg, err)
	}
	if rec := r.show(id); rec["landing_status"] != "discarded" {
		t.Fatalf("not discarded here: %v", rec["landing_status"])
	}
	if trees, _ := filepath.Glob(filepath.Join(r.sshd.HostHome, ".local/share/agency/repos/*/sandboxes", id, "tree")); len(trees) != 0 {
		t.Fatalf("the host kept the sandbox: %v", trees)
	}
}

// host check: claude and codex missing there fail it only when one of them
// is the runner a start here uses by default; an unreachable host's hint
// names the ssh config file git-agency gives ssh (agency.host.sshConfig).
func TestHostCheckRunnersAndHint(t *testing.T) {
	r := newHostRig(t)
	out, err := r.run("host", "check", "box")
	if err == nil || !regexp.MustCompile(`(?m)^FAIL claude +missing$`).MatchString(out) {
		t.Fatalf("host check with claude, the default runner, missing there: %v\n%s", err, out)
	}
	if !regexp.MustCompile(`(?m)^ok   codex +missing \(the default runner here is claude`).MatchString(out) {
		t.Fatalf("codex, not the default runner, fails the check: %s", out)
	}

	r.git("config", "agency.defaultRunner", "sh")
	if out, err := r.run("host", "check", "box"); err != nil || strings.Contains(out, "FAIL") {
		t.Fatalf("host check with the default runner sh: %v\n%s", err, out)
	}

	r.git("config", "agency.host.gone.ssh", "127.0.0.1")
	out, err = r.run("host", "check", "gone")
	want := "make 'ssh -F " + r.sshd.ClientConfig + " 127.0.0.1 true' work"
	if err == nil || !strings.Contains(out, want) {
		t.Fatalf("an unreachable host's hint does not say %q: %v\n%s", want, err, out)
	}
}
