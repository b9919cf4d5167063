package gitcore

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// benchIndex writes an index of n entries (version 2 and 4) in a fresh
// repository and returns its bytes by version.
func benchIndex(b *testing.B, n int) map[string][]byte {
	dir := b.TempDir()
	run := func(stdin string, args ...string) {
		cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
		cmd.Env = append(os.Environ(), "HOME="+dir, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
		cmd.Stdin = strings.NewReader(stdin)
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	run("", "init", "-q")
	var in strings.Builder
	for i := 0; i < n; i++ {
		fmt.Fprintf(&in, "100644 e69de29bb2d1d6434b8b29ae77c5a6f3b6b2e0d4\tdir%03d/sub%02d/file-%06d.go\n", i%500, i%37, i)
	}
	run(in.String(), "update-index", "--index-info")
	out := map[string][]byte{}
	for _, v := range []string{"2", "4"} {
		run("", "update-index", "--index-version", v)
		data, err := os.ReadFile(filepath.Join(dir, ".git", "index"))
		if err != nil {
			b.Fatal(err)
		}
		out[v] = data
	}
	return out
}

// BenchmarkParseIndexStat: TrackedUnchanged's read of a 100k-entry index.
func BenchmarkParseIndexStat(b *testing.B) {
	for v, data := range benchIndex(b, 100000) {
		b.Run("v"+v, func(b *testing.B) {
			for b.Loop() {
				if _, ok := parseIndexStat(data, 20); !ok {
					b.Fatal("not read")
				}
			}
		})
	}
}
