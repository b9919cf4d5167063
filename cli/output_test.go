package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
)

// run runs `git agency args…` in dir with stdout a terminal or not.
func runAgency(t *testing.T, dir string, tty bool, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	env := &Env{Ctx: context.Background(), Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb,
		Dir: dir, StdoutTTY: tty, Prog: "git agency"}
	code := Run(env, &AgencyCLI{}, args)
	return out.String(), errb.String(), code
}

func testRepo(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	t.Setenv("AGENCY_DATA_DIR", t.TempDir())
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	t.Setenv("GIT_CONFIG_GLOBAL", "/dev/null")
	for _, a := range [][]string{{"init", "-q", "-b", "main"}, {"-c", "user.name=T", "-c", "user.email=t@example.com", "commit", "-q", "--allow-empty", "-m", "initial"}} {
		cmd := exec.Command("git", a...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", a, err, out)
		}
	}
	return dir
}

// On a terminal the lists have a header line; without one (scripts) they
// do not, and their tab-separated rows are unchanged.
func TestListHeadersOnlyOnATerminal(t *testing.T) {
	dir := testRepo(t)
	if _, errOut, code := runAgency(t, dir, false, "worktree", "create", "--name", "feat"); code != 0 {
		t.Fatalf("worktree create: %d %s", code, errOut)
	}
	for _, c := range []struct {
		args   []string
		header string
	}{
		{[]string{"worktree", "ls"}, "NAME  ID"},
		{[]string{"agent", "ls"}, "ID  WORKTREE  RUNNER"},
	} {
		out, errOut, code := runAgency(t, dir, true, c.args...)
		if code != 0 || !strings.HasPrefix(out, c.header) {
			t.Errorf("%v on a terminal: exit %d, stdout %q, stderr %q; want the header %q first", c.args, code, out, errOut, c.header)
		}
		out, _, _ = runAgency(t, dir, false, c.args...)
		if strings.Contains(out, strings.Fields(c.header)[1]) {
			t.Errorf("%v without a terminal printed a header: %q", c.args, out)
		}
	}
	out, _, _ := runAgency(t, dir, false, "worktree", "ls")
	if !strings.HasPrefix(out, "feat\t") {
		t.Errorf("worktree ls without a terminal = %q, want tab-separated rows", out)
	}
}

// checkpoint ls shares the table: header on a terminal only.
func TestTableHeader(t *testing.T) {
	for _, tty := range []bool{true, false} {
		var out bytes.Buffer
		tb := newTable(&Env{Stdout: &out, StdoutTTY: tty}, "ID", "CREATED", "REASON")
		tb.add("1", "2026-01-02T03:04:05Z", "manual")
		tb.flush()
		got := out.String()
		if tty && got != "ID  CREATED               REASON\n1   2026-01-02T03:04:05Z  manual\n" {
			t.Errorf("on a terminal: %q", got)
		}
		if !tty && got != "1\t2026-01-02T03:04:05Z\tmanual\n" {
			t.Errorf("without a terminal: %q", got)
		}
	}
}

// printJSON writes what an indenting Encoder writes, byte for byte.
func TestPrintJSONMatchesEncoder(t *testing.T) {
	values := []any{
		nil, 1, "x", []any{}, map[string]any{},
		[]any{map[string]any{"a": []any{}, "b": map[string]any{}, "c": nil, "d": 1.5e300, "e": true}},
		map[string]any{"s": "q\"uo{te}[s],: \\ <html> & é \u2028 \x01 \\\"", "n": []any{[]any{[]any{}}, 2, "]"}},
		struct {
			A string   `json:"a"`
			B []string `json:"b"`
			C *int     `json:"c,omitempty"`
		}{A: "{\"x\": [1, 2]}", B: []string{"", ",", ":"}},
	}
	for _, v := range values {
		var want bytes.Buffer
		enc := json.NewEncoder(&want)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		if err := enc.Encode(v); err != nil {
			t.Fatal(err)
		}
		var got bytes.Buffer
		if err := printJSON(&got, v); err != nil {
			t.Fatal(err)
		}
		if got.String() != want.String() {
			t.Errorf("printJSON(%#v):\n%s\nwant:\n%s", v, got.String(), want.String())
		}
	}
}
