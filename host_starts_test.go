package gitagency_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A start on a host killed after the host started the agent and before
// the record was written here (SIGKILL, the link dropped): doctor reports
// it, gc records the agent here with the host's id, and its work lands.
// Nothing runs on the host unknown here.
func TestHostStartKilledAdopted(t *testing.T) {
	r := newHostRig(t)
	bin := filepath.Join(r.sshd.HostHome, ".local", "bin", "git-agency")
	if err := os.Rename(bin, bin+".real"); err != nil {
		t.Fatal(err)
	}
	// The host's git-agency answers a start it made only once the gate
	// exists (a start refused for its base, the first one, at once): the
	// caller is killed while it waits.
	reached, gate := filepath.Join(r.sshd.HostHome, "start-reached"), filepath.Join(r.sshd.HostHome, "start-gate")
	wrapper := `#!/bin/sh
if [ "$1 $2" = "host-serve start" ]; then
  out=$("$0.real" "$@"); rc=$?
  if [ $rc = 0 ]; then
    touch ` + reached + `
    while [ ! -e ` + gate + ` ]; do sleep 0.05; done
  fi
  printf '%s' "$out"; exit $rc
fi
exec "$0.real" "$@"
`
	if err := os.WriteFile(bin, []byte(wrapper), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.WriteFile(gate, nil, 0o644) })

	cmd := exec.Command(r.bin, "agent", "start", "-w", "feat", "--host", "box", "--runner", "sh", "--headless", "--prompt",
		"echo adopted > g.txt && git add g.txt && git commit -qm adopted")
	cmd.Dir, cmd.Env = r.repo, r.env
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r.eventually(60*time.Second, "the host started the agent", func() bool {
		_, err := os.Stat(reached)
		return err == nil
	})
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()

	if out := r.agency("agent", "ls"); strings.TrimSpace(out) != "" {
		t.Fatalf("a record before adoption: %s", out)
	}
	out, err := r.run("doctor")
	if err == nil || !strings.Contains(out, "host_starts") || !strings.Contains(out, "gc --yes") {
		t.Fatalf("doctor does not report the interrupted start: %v\n%s", err, out)
	}
	if out, _ := r.run("gc"); !strings.Contains(out, "would ask   host box about 1 interrupted start") {
		t.Fatalf("gc's dry run does not say it: %s", out)
	}

	out, _ = r.run("gc", "--yes")
	m := regexp.MustCompile(`recorded    (\S+): started on host box`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("gc recorded no agent: %s", out)
	}
	id := m[1]
	if r.hostRecord(id) == nil {
		t.Fatalf("%s is not the host's id", id)
	}
	r.waitStatus(id, "finished")
	r.eventually(60*time.Second, "its commit fetched", func() bool {
		return r.hasRef("agency/sandbox-"+id) && r.git("log", "-1", "--format=%s", "agency/sandbox-"+id) == "adopted"
	})
	r.agency("agent", "land", id)
	if _, err := os.Stat(filepath.Join(r.wt, "g.txt")); err != nil {
		t.Fatal("the adopted agent's work did not land")
	}
	if out, err := r.run("doctor"); err != nil {
		t.Fatalf("doctor after adoption: %v\n%s", err, out)
	}
}

// Undoing the land, or the discard, of an agent that ran on a host makes
// no sandbox tree here: it would hold the fetched branch (the host's
// fetches into it refused), and discard, gc and doctor would not see it.
func TestHostUndoMakesNoTree(t *testing.T) {
	r := newHostRig(t)
	id := r.agency("agent", "start", "-w", "feat", "--host", "box", "--runner", "sh", "--headless", "--prompt",
		"echo h > h.txt && git add h.txt && git commit -qm h")
	r.waitStatus(id, "finished")
	tree := filepath.Join(r.local, "repos", "*", "sandboxes", id)
	noTree := func(after string) {
		t.Helper()
		if m, _ := filepath.Glob(tree); len(m) > 0 {
			t.Fatalf("after %s a sandbox directory is here: %v", after, m)
		}
		if strings.Contains(r.git("worktree", "list"), id) {
			t.Fatalf("after %s a worktree holds the branch: %s", after, r.git("worktree", "list"))
		}
	}
	if out := r.agency("agent", "land", id); strings.Contains(out, "tree was removed") || !strings.Contains(out, "the sandbox stays on host box until 'git agency gc'") {
		t.Fatalf("the land's report of an agent on a host: %s", out)
	}
	if out := r.agency("undo"); !strings.Contains(out, "ran on host box: no sandbox tree made here") {
		t.Fatalf("undo of the land: %s", out)
	}
	noTree("undo of the land")
	if out, err := r.run("agent", "land", id); err != nil || strings.Contains(out, "refusing") {
		t.Fatalf("land again: %v\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(r.wt, "h.txt")); err != nil {
		t.Fatal("not landed again")
	}

	// A discard on a host: the host's own "undo with: git agency undo"
	// is not shown (here that undo would undo the land above).
	id2 := r.agency("agent", "start", "-w", "feat", "--host", "box", "--runner", "sh", "--headless", "--prompt", "exec sleep 600")
	r.waitStatus(id2, "running")
	out := r.agency("agent", "discard", id2)
	if strings.Contains(out, "undo with") || !strings.Contains(out, "does not undo a discard on a host") {
		t.Fatalf("the discard's report: %s", out)
	}
	var recs map[string]any
	id3 := r.agency("agent", "start", "-w", "feat", "--host", "box", "--runner", "sh", "--headless", "--prompt", "exec sleep 600")
	r.waitStatus(id3, "running")
	if err := json.Unmarshal([]byte(r.agency("agent", "discard", "--json", id3)), &recs); err != nil {
		t.Fatalf("discard --json of an agent on a host is no JSON: %v", err)
	}
	if recs["invocation_id"] != id3 || recs["landing_status"] != "discarded" {
		t.Fatalf("discard --json of an agent on a host is not its record: %v", recs)
	}
	noTree("the discards")
	if out, err := r.run("doctor"); err != nil {
		t.Fatalf("doctor: %v\n%s", err, out)
	}
	// Here: the host's own sandboxes follow "host box:".
	if out, _, _ := strings.Cut(r.agency("gc"), "host box:"); strings.Contains(out, "sandbox_tree") {
		t.Fatalf("gc finds a tree left: %s", out)
	}
}

// One run's branch gone on the host (its agent deleted it) holds back no
// other run's fetch; a run the host no longer has (its data there
// removed) ends here, failed with the reason, and what was fetched of it
// lands.
func TestHostBranchGoneAndDataRemoved(t *testing.T) {
	r := newHostRig(t)
	gone := r.agency("agent", "start", "-w", "feat", "--host", "box", "--runner", "sh", "--headless", "--prompt",
		"echo g > g.txt && git add g.txt && git commit -qm g && git checkout -qb elsewhere && git branch -D agency/sandbox-$AGENCY_INVOCATION_ID")
	r.waitStatus(gone, "finished")
	gate := filepath.Join(r.sshd.HostHome, "gate")
	other := r.agency("agent", "start", "-w", "feat", "--host", "box", "--runner", "sh", "--headless", "--prompt",
		"echo o > o.txt && git add o.txt && git commit -qm other && while [ ! -e "+gate+" ]; do sleep 0.1; done")
	t.Cleanup(func() { os.WriteFile(gate, nil, 0o644) })
	// The fetcher alone (no act) brings the other run's commit.
	r.eventually(60*time.Second, "the other run's commit fetched", func() bool {
		return r.hasRef("agency/sandbox-"+other) && r.git("log", "-1", "--format=%s", "agency/sandbox-"+other) == "other"
	})
	if out := r.agency("host", "ls"); !strings.Contains(out, "reachable") || strings.Contains(out, "unreachable") {
		t.Fatalf("host ls after a branch went: %s", out)
	}

	// The host's data removed under the running agent.
	data := filepath.Join(r.sshd.HostHome, ".local", "share", "agency")
	if err := os.Rename(data, data+".gone"); err != nil {
		t.Fatal(err)
	}
	r.killFetchers()
	if out, err := r.run("agent", "land", other); err != nil {
		t.Fatalf("land of the run the host forgot: %v\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(r.wt, "o.txt")); err != nil {
		t.Fatal("what was fetched did not land")
	}
	var rec map[string]any
	json.Unmarshal([]byte(r.agency("agent", "show", other, "--json")), &rec)
	if rec["status"] != "failed" || !strings.Contains(fmt.Sprint(rec["error"]), "no longer has this run") {
		t.Fatalf("the record of the run the host forgot: %v %v", rec["status"], rec["error"])
	}
}

// A hostile host's answers: a start naming a branch of this repository
// and another base, texts with terminal escapes. The record here keeps the
// run's own branch and the base this side sent, and no view prints an
// escape.
func TestHostHostileAnswers(t *testing.T) {
	r := newHostRig(t)
	bin := filepath.Join(r.sshd.HostHome, ".local", "bin", "git-agency")
	if err := os.Rename(bin, bin+".real"); err != nil {
		t.Fatal(err)
	}
	wrapper := `#!/bin/sh
f=$HOME/evil.sed
[ -e $HOME/evil-version ] && f=$HOME/evil-version.sed
out=$("$0.real" "$@"); rc=$?
printf '%s\n' "$out" | sed -f $f
exit $rc
`
	sedScript := `s|"sandbox_branch":"[^"]*"|"sandbox_branch":"main"|g
s|"base_commit":"[^"]*"|"base_commit":"0000000000000000000000000000000000000000"|g
s|"display":"|"display":"\\u001b]52;c;aGk=\\u0007\\u001b[2J|g
s|"runner":"|"runner":"\\u001b[31m|g
`
	os.WriteFile(filepath.Join(r.sshd.HostHome, "evil.sed"), []byte(sedScript), 0o644)
	os.WriteFile(filepath.Join(r.sshd.HostHome, "evil-version.sed"), []byte(sedScript+`s|"version":"|"version":"\\u001b[2J|g
`), 0o644)
	if err := os.WriteFile(bin, []byte(wrapper), 0o755); err != nil {
		t.Fatal(err)
	}
	head := r.git("-C", r.wt, "rev-parse", "HEAD")
	evil := filepath.Join(r.sshd.HostHome, "evil-version")
	os.WriteFile(evil, nil, 0o644)
	out, err := r.run("agent", "start", "-w", "feat", "--host", "box", "--runner", "sh", "--headless", "--prompt", "true")
	if err == nil || !strings.Contains(out, "E_HOST_VERSION") || strings.ContainsRune(out, 0x1b) {
		t.Fatalf("a start on a host whose version holds escapes: %v %q", err, out)
	}
	if out, _ := r.run("host", "ls"); strings.ContainsRune(out, 0x1b) {
		t.Fatalf("host ls prints the host's escapes: %q", out)
	}
	os.Remove(evil)
	id, err := r.run("agent", "start", "-w", "feat", "--host", "box", "--runner", "sh", "--headless", "--prompt", "exec sleep 600")
	if err != nil {
		t.Fatalf("start: %v %s", err, id)
	}
	var rec map[string]any
	json.Unmarshal([]byte(r.agency("agent", "show", id, "--json")), &rec)
	if rec["sandbox_branch"] != "agency/sandbox-"+id || rec["base_commit"] != head {
		t.Fatalf("the host named the branch or base: %v %v (base %s)", rec["sandbox_branch"], rec["base_commit"], head)
	}
	for _, args := range [][]string{{"agent", "ls"}, {"agent", "show", id}, {"host", "ls"}} {
		if out, _ := r.run(args...); strings.ContainsRune(out, 0x1b) || strings.ContainsRune(out, 0x07) {
			t.Fatalf("%v prints the host's escapes: %q", args, out)
		}
	}
	r.run("agent", "kill", id)
}

// A host name that would name files outside the data directory
// (agency.host.../../x.ssh) is refused with a hint, and makes nothing.
func TestHostBadName(t *testing.T) {
	r := newHostRig(t)
	r.git("config", "agency.host.../../evil.ssh", r.sshd.Alias)
	out, err := r.run("agent", "start", "-w", "feat", "--host", "../../evil", "--runner", "sh", "--headless", "--prompt", "true")
	if err == nil || !strings.Contains(out, "error: E_HOST: host name") || !strings.Contains(out, "hint: rename it: git config --rename-section") {
		t.Fatalf("a start on a host named ../../evil: %v\n%s", err, out)
	}
	if m, _ := filepath.Glob(filepath.Join(r.local, "*", "evil*")); len(m) > 0 {
		t.Fatalf("files made outside: %v", m)
	}
	if m, _ := filepath.Glob(filepath.Join(r.local, "repos", "evil*")); len(m) > 0 {
		t.Fatalf("files made outside: %v", m)
	}
	if out := r.agency("host", "ls"); strings.Contains(out, "evil") {
		t.Fatalf("host ls lists it: %s", out)
	}
}

// A run that ended on a host waits to land here as a local one does:
// `land --all` lands it.
func TestHostLandAll(t *testing.T) {
	r := newHostRig(t)
	id := r.agency("agent", "start", "-w", "feat", "--host", "box", "--runner", "sh", "--headless", "--prompt",
		"echo all > all.txt && git add all.txt && git commit -qm all")
	r.waitStatus(id, "finished")
	r.eventually(60*time.Second, "its end caught up here", func() bool {
		m, _ := filepath.Glob(filepath.Join(r.local, "repos", "*", "invocations", id, "host-final"))
		return len(m) > 0
	})
	if out, err := r.run("agent", "land", "--all"); err != nil || !strings.Contains(out, id+" landed") {
		t.Fatalf("land --all: %v\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(r.wt, "all.txt")); err != nil {
		t.Fatal("not landed")
	}
}

// agency.autoLand lands a run that ended on a host, as a local one's,
// once its fetcher brought its end.
func TestHostAutoLand(t *testing.T) {
	r := newHostRig(t)
	r.git("config", "agency.autoLand", "true")
	id := r.agency("agent", "start", "-w", "feat", "--host", "box", "--runner", "sh", "--headless", "--prompt",
		"echo auto > auto.txt && git add auto.txt && git commit -qm auto")
	// The record says landed last (the files and the branch move first):
	// wait for it, then look at the tree.
	r.eventually(60*time.Second, "it landed by itself", func() bool {
		var rec map[string]any
		json.Unmarshal([]byte(r.agency("agent", "show", id, "--json")), &rec)
		return rec["landing_status"] == "landed"
	})
	if _, err := os.Stat(filepath.Join(r.wt, "auto.txt")); err != nil {
		t.Fatalf("landed, but not in the integration tree: %v", err)
	}
}

// An autoLand that fails (the integration tree has uncommitted changes)
// is said in the run's supervisor.log here, as a local run's supervisor
// says it, not dropped.
func TestHostAutoLandFailureLogged(t *testing.T) {
	r := newHostRig(t)
	r.git("config", "agency.autoLand", "true")
	if err := os.WriteFile(filepath.Join(r.wt, "a.txt"), []byte("edited here\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	id := r.agency("agent", "start", "-w", "feat", "--host", "box", "--runner", "sh", "--headless", "--prompt",
		"echo auto > auto.txt && git add auto.txt && git commit -qm auto")
	logs, _ := filepath.Glob(filepath.Join(r.local, "repos", "*", "invocations", id))
	if len(logs) != 1 {
		t.Fatalf("the run's directory here: %v", logs)
	}
	log := filepath.Join(logs[0], "supervisor.log")
	r.eventually(90*time.Second, "the failed autoLand in supervisor.log", func() bool {
		b, _ := os.ReadFile(log)
		return strings.Contains(string(b), "warning: ") && strings.Contains(string(b), "uncommitted")
	})
	var rec map[string]any
	json.Unmarshal([]byte(r.agency("agent", "show", id, "--json")), &rec)
	if rec["landing_status"] != "pending" {
		t.Fatalf("the run after a failed autoLand: %v", rec["landing_status"])
	}
}

// What a host sends is an agent's: git checks every object fetched
// (fetch.fsckObjects), and a run whose refs bring a malformed one (a tree
// entry named .git) is refused alone, with an event saying why, while the
// host's other runs come back.
func TestHostRefusesBadObjects(t *testing.T) {
	r := newHostRig(t)
	bad := r.agency("agent", "start", "-w", "feat", "--host", "box", "--runner", "sh", "--headless", "--prompt",
		`b=$(echo x | git hash-object -w --stdin) && t=$(printf "100644 blob $b\t.git\n" | git mktree) && c=$(git commit-tree -p HEAD -m bad $t) && git update-ref HEAD $c`)
	good := r.agency("agent", "start", "-w", "feat", "--host", "box", "--runner", "sh", "--headless", "--prompt",
		"echo g > g.txt && git add g.txt && git commit -qm good")
	r.waitStatus(bad, "finished")
	r.waitStatus(good, "finished")
	if got := r.git("log", "-1", "--format=%s", "agency/sandbox-"+good); got != "good" {
		t.Fatalf("the good run's branch here: %q", got)
	}
	if r.hasRef("agency/sandbox-"+bad) && r.git("log", "-1", "--format=%s", "agency/sandbox-"+bad) == "bad" {
		t.Fatal("the malformed commit was fetched")
	}
	// The tree {100644 .git: blob "x\n"}, whatever made it.
	if out, err := r.gitTry("cat-file", "-e", "844e32858c207f74f3d80721ef01c4b82fad2423"); err == nil {
		t.Fatalf("the malformed tree is in the object store: %s", out)
	}
	events, _ := filepath.Glob(filepath.Join(r.local, "repos", "*", "invocations", bad, "events.jsonl"))
	if len(events) != 1 {
		t.Fatalf("events of %s: %v", bad, events)
	}
	if b, _ := os.ReadFile(events[0]); !strings.Contains(string(b), `"host_objects_refused"`) || !strings.Contains(string(b), "hasDotgit") {
		t.Fatalf("no host_objects_refused event naming git's reason:\n%s", b)
	}
}

// A host never lands, so its gc alone would keep the sandbox of a run
// landed here for ever: gc here tells the host's gc which of its runs
// landed, and their sandboxes there go; a run not landed keeps its own.
func TestHostGCRemovesLandedSandboxes(t *testing.T) {
	r := newHostRig(t)
	landed := r.agency("agent", "start", "-w", "feat", "--host", "box", "--runner", "sh", "--headless", "--prompt",
		"echo l > l.txt && git add l.txt && git commit -qm landed")
	kept := r.agency("agent", "start", "-w", "feat", "--host", "box", "--runner", "sh", "--headless", "--prompt",
		"echo k > k.txt && git add k.txt && git commit -qm kept")
	r.waitStatus(landed, "finished")
	r.waitStatus(kept, "finished")
	r.agency("agent", "land", landed)
	there := func(id string) bool {
		m, _ := filepath.Glob(filepath.Join(r.sshd.HostHome, ".local/share/agency/repos/*/sandboxes", id, "tree"))
		return len(m) == 1
	}
	if !there(landed) || !there(kept) {
		t.Fatal("the host's sandboxes are not where the test looks")
	}

	out := r.agency("gc", "--dry-run")
	if !strings.Contains(out, "landed by the machine it was started from") || !there(landed) {
		t.Fatalf("gc --dry-run: %s", out)
	}
	out = r.agency("gc", "--yes")
	if there(landed) {
		t.Fatalf("gc left the landed run's sandbox on the host: %s", out)
	}
	if !there(kept) {
		t.Fatalf("gc removed a run's sandbox on the host that was not landed: %s", out)
	}
}
