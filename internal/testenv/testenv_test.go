package testenv

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestMain(m *testing.M) {
	os.Exit(Main(m))
}

// A missing tool is "skip" on a developer's machine and an error under CI.
func TestLookFailsUnderCI(t *testing.T) {
	const missing = "agency-no-such-tool"
	t.Setenv("CI", "")
	if p, err := Look(missing); p != "" || err != nil {
		t.Errorf("Look(%q) = %q, %v; want \"\", nil (skip)", missing, p, err)
	}
	if ok, err := HaveFile("/no/such/file"); ok || err != nil {
		t.Errorf("HaveFile = %v, %v; want false, nil", ok, err)
	}
	t.Setenv("CI", "true")
	if _, err := Look(missing); err == nil {
		t.Errorf("CI=true: Look(%q) found nothing and said nothing", missing)
	}
	if _, err := HaveFile("/no/such/file"); err == nil {
		t.Error("CI=true: HaveFile of a missing file said nothing")
	}
	if p, err := Look("sh"); p == "" || err != nil {
		t.Errorf("Look(sh) = %q, %v", p, err)
	}
}

// Main's environment: nothing of the developer's HOME or git config.
func TestMainIsHermetic(t *testing.T) {
	home := os.Getenv("HOME")
	if !filepath.IsAbs(home) || filepath.Base(home) != "home" {
		t.Fatalf("HOME = %q, not Main's", home)
	}
	for _, k := range []string{"XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME"} {
		if v := os.Getenv(k); !strings.HasPrefix(v, home+"/") {
			t.Errorf("%s = %q, not under HOME %q", k, v, home)
		}
	}
	b, err := os.ReadFile(os.Getenv("GIT_CONFIG_GLOBAL"))
	if err != nil || string(b) != gitconfig {
		t.Errorf("GIT_CONFIG_GLOBAL = %q: %q, %v", os.Getenv("GIT_CONFIG_GLOBAL"), b, err)
	}
	if os.Getenv("GIT_CONFIG_NOSYSTEM") != "1" {
		t.Error("GIT_CONFIG_NOSYSTEM is not 1")
	}
}
