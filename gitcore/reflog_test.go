package gitcore

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func writeReflog(t *testing.T, common string, lines ...string) {
	t.Helper()
	p := filepath.Join(common, "logs", "refs", "heads", "agency", "b")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

func entry(old, new string, at time.Time, msg string) string {
	return fmt.Sprintf("%s %s A U Thor <a@example.com> %d +0000\t%s", old, new, at.Unix(), msg)
}

// A branch is moved behind git's back when its tip is not the reflog's
// newest value, or a recent entry does not start where the one before
// ended; an accept entry, or entries older than git keeps every entry,
// end the look back.
func TestReflogBreak(t *testing.T) {
	now := time.Now()
	old := now.Add(-60 * 24 * time.Hour)
	r := &Repo{CommonDir: t.TempDir()}
	cases := []struct {
		name    string
		lines   []string
		tip     string
		broken  bool
		expects string
	}{
		{"in step", []string{entry("0", "a", now, "branch"), entry("a", "b", now, "commit")}, "b", false, ""},
		{"file written", []string{entry("0", "a", now, "branch")}, "x", true, "a"},
		{"committed on top of a write", []string{entry("0", "a", now, "branch"), entry("x", "y", now, "commit")}, "y", true, "a"},
		{"accepted", []string{entry("0", "a", now, "branch"), entry("x", "a", now, "agency: accept"), entry("a", "b", now, "c")}, "b", false, ""},
		{"gap older than git keeps", []string{entry("0", "a", old, "branch"), entry("x", "y", now, "commit")}, "y", false, ""},
	}
	for _, c := range cases {
		writeReflog(t, r.CommonDir, c.lines...)
		exp, _, broken := r.ReflogBreak("agency/b", c.tip, now)
		if broken != c.broken || exp != c.expects {
			t.Errorf("%s: ReflogBreak = %q, %v; want %q, %v", c.name, exp, broken, c.expects, c.broken)
		}
	}
	if _, _, broken := r.ReflogBreak("agency/none", "a", now); broken {
		t.Error("a branch without a reflog is reported moved")
	}
}
