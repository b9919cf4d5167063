package gitcore

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// GlobalConfigValue reads git's files when they say it all (no git
// process), and asks git when a file includes another: the same value
// either way.
func TestGlobalConfigValueFromFiles(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", "")
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	t.Setenv("GIT_CONFIG_GLOBAL", "")
	os.Unsetenv("GIT_CONFIG_GLOBAL")
	write := func(body string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(home, ".gitconfig"), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()
	write("[agency]\n\tdataDir = /one\n\tdatadir = /two\n")
	if v, err := GlobalConfigValue(ctx, "agency.dataDir"); err != nil || v != "/two" {
		t.Fatalf("from the files: %q %v", v, err)
	}
	if v, err := GlobalConfigValue(ctx, "agency.missing"); err != nil || v != "" {
		t.Fatalf("unset: %q %v", v, err)
	}
	inc := filepath.Join(home, "inc")
	if err := os.WriteFile(inc, []byte("[agency]\n\tdataDir = /three\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	write("[agency]\n\tdataDir = /one\n[include]\n\tpath = " + inc + "\n")
	if v, err := GlobalConfigValue(ctx, "agency.dataDir"); err != nil || v != "/three" {
		t.Fatalf("with an include (git asked): %q %v", v, err)
	}
}
