package cli

import (
	"bytes"
	"strings"
	"testing"

	"github.com/git-agency/git-agency/errs"
)

// An error without a hint of its own is printed with what docs/errors.md
// says to do about its code (errs.Fix); one with a hint keeps it.
func TestErrorWithoutHintGetsTheCodesFix(t *testing.T) {
	var stderr bytes.Buffer
	env := &Env{Stderr: &stderr}
	if code := printError(env, errs.New(errs.EIO, "", "cannot signal the agent")); code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	if want := "hint: " + errs.Fix[errs.EIO] + "\n"; !strings.HasSuffix(stderr.String(), want) {
		t.Errorf("stderr = %q, want it to end with %q", stderr.String(), want)
	}
	stderr.Reset()
	printError(env, errs.New(errs.EIO, "free some space", "disk full"))
	if !strings.HasSuffix(stderr.String(), "hint: free some space\n") {
		t.Errorf("stderr = %q: the error's own hint was replaced", stderr.String())
	}
	stderr.Reset()
	env.JSON = true
	printError(env, errs.New(errs.EIO, "", "cannot signal the agent"))
	if !strings.Contains(stderr.String(), `"hint":"read the message`) {
		t.Errorf("JSON error = %s: no hint from errs.Fix", stderr.String())
	}
}
