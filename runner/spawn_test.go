package runner

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// The supervisor and the hooks are git-agency's hidden commands: another
// of our programs (git-agency-watch) finds git-agency beside it, else on
// PATH, and never names itself.
func TestAgencyExeFor(t *testing.T) {
	dir := t.TempDir()
	watch := filepath.Join(dir, "git-agency-watch")
	agency := filepath.Join(dir, AgencyProgram)
	for _, p := range []string{watch, agency} {
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	other := t.TempDir()
	onPath := filepath.Join(other, AgencyProgram)
	none := func(string) (string, error) { return "", errors.New("not found") }
	path := func(string) (string, error) { return onPath, nil }

	if got := agencyExeFor(agency, none); got != agency {
		t.Errorf("git-agency itself: %q", got)
	}
	if got := agencyExeFor(watch, path); got != agency {
		t.Errorf("watch with git-agency beside it: %q, want %q", got, agency)
	}
	os.Remove(agency)
	if got := agencyExeFor(watch, path); got != onPath {
		t.Errorf("watch alone: %q, want the one on PATH %q", got, onPath)
	}
	if got := agencyExeFor(watch, none); got != "" {
		t.Errorf("no git-agency anywhere: %q, want \"\"", got)
	}
}
