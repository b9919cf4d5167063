package land

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/git-agency/git-agency/store"
)

// logTail keeps the last n lines, ending in a newline; a missing file is
// empty.
func TestLogTail(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log")
	os.WriteFile(path, []byte("1\n2\n3\n4"), 0o600)
	if got := logTail(path, 2); got != "3\n4\n" {
		t.Errorf("logTail 2 = %q", got)
	}
	if got := logTail(path, 10); got != "1\n2\n3\n4\n" {
		t.Errorf("logTail 10 = %q", got)
	}
	if got := logTail(filepath.Join(t.TempDir(), "none"), 3); got != "" {
		t.Errorf("missing log = %q", got)
	}
}

// The follow-up prompt of a red verify gives the command, its exit status
// and the end of its log.
func TestSendBackPrompt(t *testing.T) {
	path := filepath.Join(t.TempDir(), "verify.log")
	var log strings.Builder
	for i := range 150 {
		log.WriteString("line " + string(rune('a'+i%26)) + "\n")
	}
	log.WriteString("FAIL: tests/d.sh\n")
	os.WriteFile(path, []byte(log.String()), 0o600)
	code := 1
	rec := &store.InvocationRecord{VerifyState: store.VerifyState{VerifyCommand: "make test", VerifyExitCode: &code,
		VerifyError: "verify failed (exit 1)", VerifyLog: path}}
	p := (&Lander{}).sendBackPrompt(rec)
	for _, want := range []string{"`make test` failed", "(exit status 1)", "last 100 lines", "FAIL: tests/d.sh\n```"} {
		if !strings.Contains(p, want) {
			t.Errorf("prompt lacks %q:\n%s", want, p)
		}
	}
	if n := strings.Count(p, "\nline "); n != 99 {
		t.Errorf("prompt quotes %d log lines besides the last, want 99", n)
	}
}
