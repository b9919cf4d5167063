package gitagency_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/git-agency/git-agency/internal/testenv"
)

// runMake runs make with args, in env (nil: this process's environment),
// and returns what it printed. The tests that call it build the binaries,
// so -short skips them; a missing make fails under CI=true.
func runMake(t *testing.T, env []string, args ...string) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the binaries: skipped with -short")
	}
	testenv.Need(t, "make")

	cmd := exec.Command("make", args...)
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("make %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// withoutEnv is this process's environment without the variables keys.
func withoutEnv(keys ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		keep := true
		for _, key := range keys {
			keep = keep && k != key
		}
		if keep {
			env = append(env, kv)
		}
	}
	return env
}
