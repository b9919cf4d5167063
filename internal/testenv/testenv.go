// Package testenv makes every test of the module hermetic and strict: a
// package's TestMain runs its tests under a HOME, XDG directories and git
// configuration of their own (Main), and a test that needs a system tool
// skips without it on a developer's machine but fails under CI=true (Need),
// so that a green CI run has run every test.
package testenv

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Tools are the programs CI installs (.ci/run) for the tests that need
// them. A script asks for one with [need:PROG], a Go test with Need; a
// missing one fails under CI=true instead of skipping.
var Tools = []string{
	"tmux", "bwrap", "man", "script", "sshd", "ssh-keygen", "curl",
	"git-lfs", "setsid", "bash", "make",
}

// gitconfig is the global git configuration every test starts from: an
// identity and no signing, whatever the developer's own says.
const gitconfig = "[user]\n\tname = Agency Test\n\temail = test@example.com\n" +
	"[commit]\n\tgpgsign = false\n[tag]\n\tgpgsign = false\n"

// CI reports whether the tests run under CI (CI=true or CI=1, as CI
// services set it): then a missing tool fails the test that needs it.
func CI() bool {
	v := os.Getenv("CI")
	return v == "true" || v == "1"
}

// Look finds prog on PATH (sshd also in the sbin directories, where it is
// installed but not always on a user's PATH). It returns "" and no error
// when prog is missing and the tests may skip, and an error when prog is
// missing under CI=true.
func Look(prog string) (string, error) {
	if p, err := exec.LookPath(prog); err == nil {
		return p, nil
	}

	if prog == "sshd" {
		for _, dir := range []string{"/usr/sbin", "/sbin", "/usr/local/sbin"} {
			p := filepath.Join(dir, prog)
			if st, err := os.Stat(p); err == nil && st.Mode()&0o111 != 0 {
				return p, nil
			}
		}
	}

	if CI() {
		return "", fmt.Errorf("CI=true and %s is not installed: .ci/run installs it; a test that needs it must not skip under CI", prog)
	}

	return "", nil
}

// HaveFile reports whether path exists; a missing one is an error under
// CI=true (a file a package CI installs provides, bash-completion's say).
func HaveFile(path string) (bool, error) {
	if _, err := os.Stat(path); err == nil {
		return true, nil
	}
	if CI() {
		return false, fmt.Errorf("CI=true and %s is missing: .ci/run installs the package that has it", path)
	}
	return false, nil
}

// Need returns the path of prog, skips the test when it is missing, and
// fails it instead under CI=true.
func Need(t testing.TB, prog string) string {
	t.Helper()
	p, err := Look(prog)
	if err != nil {
		t.Fatal(err)
	}
	if p == "" {
		t.Skipf("%s is not installed", prog)
	}
	return p
}

// Main runs a package's tests (m.Run) with HOME, the XDG directories and
// GIT_CONFIG_GLOBAL pointing into a directory of their own, and
// GIT_CONFIG_NOSYSTEM=1, so that no test reads the developer's git
// configuration. Go's own caches stay the developer's (GOPATH, GOCACHE,
// GOENV), so that a test that builds does not build the world again.
// Call it as os.Exit(testenv.Main(m)) from TestMain.
func Main(m *testing.M) int {
	dir, err := os.MkdirTemp("", "agency-test-env-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	if err := Hermetic(dir); err != nil {
		panic(err)
	}
	return m.Run()
}

// Hermetic sets this process's environment as Main describes, under dir.
func Hermetic(dir string) error {
	keepGo()
	home := filepath.Join(dir, "home")
	run := filepath.Join(dir, "run")
	for _, d := range []string{home, run} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return err
		}
	}

	global := filepath.Join(dir, "gitconfig")
	if err := os.WriteFile(global, []byte(gitconfig), 0o644); err != nil {
		return err
	}

	for k, v := range map[string]string{
		"HOME":                home,
		"XDG_CONFIG_HOME":     filepath.Join(home, ".config"),
		"XDG_DATA_HOME":       filepath.Join(home, ".local", "share"),
		"XDG_STATE_HOME":      filepath.Join(home, ".local", "state"),
		"XDG_CACHE_HOME":      filepath.Join(home, ".cache"),
		"XDG_RUNTIME_DIR":     run,
		"GIT_CONFIG_GLOBAL":   global,
		"GIT_CONFIG_NOSYSTEM": "1",
	} {
		if err := os.Setenv(k, v); err != nil {
			return err
		}
	}

	for _, k := range []string{"GIT_CONFIG_SYSTEM", "GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT", "GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "XDG_CONFIG_DIRS"} {
		os.Unsetenv(k)
	}

	return nil
}

// keepGo pins the Go tool's directories that default under HOME or the
// user's cache and config directories to where they are now.
func keepGo() {
	home, _ := os.UserHomeDir()
	cache, _ := os.UserCacheDir()
	config, _ := os.UserConfigDir()
	for k, v := range map[string]string{
		"GOPATH":  filepath.Join(home, "go"),
		"GOCACHE": filepath.Join(cache, "go-build"),
		"GOENV":   filepath.Join(config, "go", "env"),
	} {
		if _, set := os.LookupEnv(k); !set && v != "" {
			os.Setenv(k, v)
		}
	}
}
