package testrepo

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Seed is one seed file of a fuzz test.
type Seed struct {
	Path string
	Data []byte
}

// Seeds reads the files glob names, a fuzz test's seeds. It fails the test
// when there are none: a fuzz test that starts from nothing tests little.
func Seeds(t testing.TB, glob string) []Seed {
	t.Helper()

	paths, err := filepath.Glob(glob)
	if err != nil || len(paths) == 0 {
		t.Fatalf("no seeds %s: %v", glob, err)
	}

	seeds := make([]Seed, 0, len(paths))
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		seeds = append(seeds, Seed{Path: p, Data: data})
	}

	return seeds
}

// Oracle runs git, as the oracle of a fuzz test, with args in dir under
// git's defaults only: HOME is dir, there is neither a system nor a global
// configuration, LC_ALL=C, and env is added. It returns git's output; ok
// is false when git exits with an error, that is, refuses its input.
func Oracle(t testing.TB, dir string, env []string, args ...string) (out string, ok bool) {
	t.Helper()

	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append([]string{"HOME=" + dir, "PATH=" + os.Getenv("PATH"), "GIT_CONFIG_NOSYSTEM=1",
		"GIT_CONFIG_GLOBAL=/dev/null", "LC_ALL=C"}, env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr

	if err := cmd.Run(); err != nil {
		var exitErr *exec.ExitError
		if !errors.As(err, &exitErr) {
			t.Fatal(err)
		}
		return "", false
	}

	return stdout.String(), true
}
