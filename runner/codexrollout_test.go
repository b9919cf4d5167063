package runner

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// writeRollout puts the real session log of a headed codex whose patch its
// read-only sandbox refused (testdata/hx-deny.rollout.jsonl) under home as
// codex would for dir, its times at `at`, plus extra lines.
func writeRollout(t *testing.T, home, dir string, at time.Time, extra ...string) {
	t.Helper()
	b, err := os.ReadFile("testdata/hx-deny.rollout.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		l = strings.ReplaceAll(l, "@SANDBOX@", dir)
		if i := strings.Index(l, `"timestamp":"`); i == 1 {
			end := strings.Index(l[i+13:], `"`)
			l = l[:i+13] + at.UTC().Format(time.RFC3339Nano) + l[i+13+end:]
		}
		out = append(out, l)
	}
	out = append(out, extra...)
	day := filepath.Join(home, "sessions", at.Local().Format("2006/01/02"))
	if err := os.MkdirAll(day, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(day, "rollout-x.jsonl"), []byte(strings.Join(out, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestCodexRolloutDenials(t *testing.T) {
	home, dir := t.TempDir(), "/sb/tree"
	now := time.Now()
	// A command that ran and failed, whose output says "rejected" (a git
	// push), is no refusal.
	push := `{"timestamp":"` + now.UTC().Format(time.RFC3339Nano) + `","type":"response_item","payload":{"type":"function_call_output","call_id":"c9","output":"Exit code: 1\nOutput:\n ! [rejected] main -> main (fetch first)\n"}}`
	writeRollout(t, home, dir, now, push)
	n, last := codexRolloutDenials(home, dir, now.Add(-time.Second))
	if n != 1 || last != "denied: patch rejected: writing is blocked by read-only sandbox; rejected by user approval settings" {
		t.Fatalf("got %d %q", n, last)
	}
	// Another directory's session, or refusals before the run began, count nothing.
	if n, _ := codexRolloutDenials(home, "/other/tree", now.Add(-time.Second)); n != 0 {
		t.Fatalf("another directory's session: %d refusals", n)
	}
	if n, _ := codexRolloutDenials(home, dir, now.Add(time.Second)); n != 0 {
		t.Fatalf("refusals before the run: %d", n)
	}
	if n, _ := codexRolloutDenials(filepath.Join(home, "none"), dir, now.Add(-time.Second)); n != 0 {
		t.Fatalf("no session logs: %d", n)
	}
}

func TestCodexHome(t *testing.T) {
	for _, c := range []struct {
		env  []string
		want string
	}{
		{[]string{"HOME=/h", "CODEX_HOME=/c"}, "/c"},
		{[]string{"HOME=/h"}, "/h/.codex"},
		{nil, ""},
	} {
		if got := codexHome(c.env); got != c.want {
			t.Errorf("codexHome(%q) = %q, want %q", c.env, got, c.want)
		}
	}
}
