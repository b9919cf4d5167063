package store

import (
	"os"
	"path/filepath"
	"testing"
)

// RemoveRetired empties only a retired directory inside the data
// directory: one named retired beside a .lock elsewhere (a hand-run
// `git-agency remove-retired <dir>`) keeps its files.
func TestRemoveRetiredOnlyInsideDataDir(t *testing.T) {
	root := t.TempDir()
	data := filepath.Join(root, "data")
	mine := filepath.Join(root, "mine", "retired")
	ours := filepath.Join(data, "repos", "r1", "retired")
	for _, dir := range []string{mine, ours} {
		if err := os.MkdirAll(filepath.Join(dir, "t1"), 0o700); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, "t1", "f"), []byte("x"), 0o600)
		os.WriteFile(filepath.Join(filepath.Dir(dir), ".lock"), nil, 0o600)
	}
	if err := RemoveRetired(data, mine); err == nil {
		t.Fatal("a retired directory outside the data directory was accepted")
	}
	if _, err := os.Stat(filepath.Join(mine, "t1", "f")); err != nil {
		t.Fatalf("its files are gone: %v", err)
	}
	if err := RemoveRetired(data, ours); err != nil {
		t.Fatal(err)
	}
	if left := RetiredEntries(ours); len(left) != 0 {
		t.Fatalf("left: %v", left)
	}
}
