package runner

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func writeProg(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "prog")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// doctor asks runner for a runner's version: the first line on success,
// "" on failure, and a program that never answers is ended at the deadline.
func TestSpecVersion(t *testing.T) {
	t.Setenv("GIT_DIR", "/nonexistent")
	spec := Spec{Name: "mine", Program: "prog"}
	ok := writeProg(t, `[ "$1" = --version ] || exit 3; [ -z "$GIT_DIR" ] || exit 4; printf ' mine 1.2.3 \nbuilt today\n'`)
	if got := spec.Version(context.Background(), ok); got != "mine 1.2.3" {
		t.Errorf("Version = %q, want %q", got, "mine 1.2.3")
	}
	fail := writeProg(t, `echo 'usage: prog'; exit 2`)
	if got := spec.Version(context.Background(), fail); got != "" {
		t.Errorf("Version of a failing program = %q, want empty", got)
	}
	hang := writeProg(t, `exec sleep 60`)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	if got := spec.Version(ctx, hang); got != "" {
		t.Errorf("Version of a hanging program = %q, want empty", got)
	}
	if d := time.Since(start); d > versionWait {
		t.Errorf("Version waited %v for a hanging program, past its deadline", d)
	}
}
