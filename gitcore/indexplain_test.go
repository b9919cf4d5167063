package gitcore

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// indexPlain reads the index as a stream: what it allocates does not grow
// with the index (a supervisor checks a 100k-file index on every full
// checkpoint), and a cut-off or sparse index is still refused.
func TestIndexPlainStreams(t *testing.T) {
	_, dir := snapRepo(t)
	index := filepath.Join(dir, ".git", "index")
	var in strings.Builder
	blob := strings.TrimSpace(git(t, dir, "hash-object", "-w", "tracked.txt"))
	for i := 0; i < 20000; i++ {
		fmt.Fprintf(&in, "100644 %s\td%03d/some-longer-file-name-%05d.txt\n", blob, i%300, i)
	}
	cmd := exec.Command("git", "-C", dir, "update-index", "--index-info")
	cmd.Stdin = strings.NewReader(in.String())
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("update-index --index-info: %v\n%s", err, out)
	}
	fi, err := os.Stat(index)
	if err != nil {
		t.Fatal(err)
	}
	for _, version := range []string{"2", "4"} {
		git(t, dir, "update-index", "--index-version", version)
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		plain, _ := indexPlain(index, 20)
		runtime.ReadMemStats(&after)
		if !plain {
			t.Fatalf("version %s: indexPlain = false", version)
		}
		if got := after.TotalAlloc - before.TotalAlloc; got > 256<<10 {
			t.Errorf("version %s: indexPlain of a %d-byte index allocated %d bytes", version, fi.Size(), got)
		}
	}
	data, err := os.ReadFile(index)
	if err != nil {
		t.Fatal(err)
	}
	cut := filepath.Join(dir, ".git", "cut-index")
	if err := os.WriteFile(cut, data[:len(data)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	if plain, _ := indexPlain(cut, 20); plain {
		t.Error("an index cut in half: indexPlain = true")
	}
	git(t, dir, "commit", "-q", "-m", "many")
	git(t, dir, "config", "index.sparse", "true")
	git(t, dir, "sparse-checkout", "set", "--cone", "d000")
	if plain, _ := indexPlain(index, 20); plain {
		t.Error("a sparse index: indexPlain = true")
	}
}
