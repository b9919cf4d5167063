package gitagency_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The landing flows with the agents on a host: the forecast (land --check,
// clean then conflicting), a verified land, undo of that land and the land
// again, all here on the refs the host's fetcher brought back.
func TestHostLandForecastVerifyUndo(t *testing.T) {
	r := newHostRig(t)
	a := r.agency("agent", "start", "-w", "feat", "--host", "box", "--runner", "sh", "--headless", "--prompt",
		"echo x > x.txt && echo from-a > a.txt && git add x.txt a.txt && git commit -qm from-a")
	b := r.agency("agent", "start", "-w", "feat", "--host", "box", "--runner", "sh", "--headless", "--prompt",
		"echo from-b > a.txt && git add a.txt && git commit -qm from-b")
	r.waitStatus(a, "finished")
	r.waitStatus(b, "finished")

	// forecast: both land cleanly alone; once a landed, b conflicts
	if out := r.agency("agent", "land", "--check", a); !strings.Contains(out, "would land cleanly: 1 commit") {
		t.Fatalf("land --check of the host's work: %s", out)
	}
	r.git("config", "agency.verify", "test -f x.txt && echo verified-here")
	r.agency("agent", "land", a)
	var shown map[string]any
	json.Unmarshal([]byte(r.agency("agent", "show", a, "--json")), &shown)
	if shown["verify_status"] != "passed" || shown["landing_status"] != "landed" {
		t.Fatalf("verified land of the host's work: %v %v", shown["verify_status"], shown["landing_status"])
	}
	if out := r.agency("agent", "logs", "--verify", a); !strings.Contains(out, "verified-here") {
		t.Fatalf("verify log: %s", out)
	}
	out, err := r.run("agent", "land", "--check", b)
	if err == nil || !strings.Contains(out, "would conflict") || !strings.Contains(out, "a.txt") {
		t.Fatalf("forecast of the conflicting host work: %v %s", err, out)
	}

	// undo of the land, then the land again
	r.agency("undo")
	if _, err := os.Stat(filepath.Join(r.wt, "x.txt")); err == nil {
		t.Fatal("undo left the landed file")
	}
	json.Unmarshal([]byte(r.agency("agent", "show", a, "--json")), &shown)
	if shown["landing_status"] == "landed" {
		t.Fatalf("undo left the record landed: %v", shown["landing_status"])
	}
	r.agency("agent", "land", a)
	if b, err := os.ReadFile(filepath.Join(r.wt, "x.txt")); err != nil || string(b) != "x\n" {
		t.Fatalf("the land after undo: %q %v", b, err)
	}
}

// agency.verify.hosts: a verified land runs its check on the host (the
// candidate pushed to its mirror, checked in a verify tree there, the
// outcome and log back here); with the host gone, the check runs here.
func TestHostVerifyOnHost(t *testing.T) {
	r := newHostRig(t)
	r.git("config", "agency.verify", "test -f v1.txt && echo checked-in $PWD")
	r.git("config", "agency.verify.hosts", "box")
	a := r.agency("agent", "start", "-w", "feat", "--runner", "sh", "--headless", "--prompt",
		"echo v > v1.txt && git add v1.txt && git commit -qm v1")
	r.waitStatus(a, "finished")
	r.agency("agent", "land", a)
	if out := r.agency("agent", "logs", "--verify", a); !strings.Contains(out, "ran on host box") || !strings.Contains(out, "checked-in "+r.sshd.HostHome) {
		t.Fatalf("the check did not run on the host: %s", out)
	}
	var shown map[string]any
	json.Unmarshal([]byte(r.agency("agent", "show", a, "--json")), &shown)
	if shown["verify_status"] != "passed" || shown["landing_status"] != "landed" {
		t.Fatalf("verified on the host, not landed: %v %v", shown["verify_status"], shown["landing_status"])
	}
	// The host goes away: the next check runs here.
	r.sshd.Stop()
	b := r.agency("agent", "start", "-w", "feat", "--runner", "sh", "--headless", "--prompt",
		"echo w > w.txt && git add w.txt && git commit -qm w")
	r.waitStatus(b, "finished")
	r.agency("agent", "land", b)
	out := r.agency("agent", "logs", "--verify", b)
	if strings.Contains(out, "ran on host") || !strings.Contains(out, "checked-in "+r.local) {
		t.Fatalf("the check lost with its host did not run here: %s", out)
	}
	if _, err := os.Stat(filepath.Join(r.wt, "w.txt")); err != nil {
		t.Fatal("not landed after the check ran here")
	}
}
