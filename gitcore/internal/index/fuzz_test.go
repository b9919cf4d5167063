package index

import (
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/git-agency/git-agency/internal/testrepo"
)

// FuzzIndex compares the entry iterator with git's own reader on index
// files: `git ls-files --stage --debug -z` prints every entry's mode, id,
// stage, path, stat data and flags. An input is a format byte (even:
// SHA-1, odd: SHA-256) and an index file without its trailing checksum,
// which the test appends (git refuses a file whose checksum is wrong, and
// mutations would otherwise never get past it). Where git reads the file,
// the iterator either refuses it or reads exactly git's entries; where git
// refuses it, the iterator must refuse it too. (git runs only on what the
// iterator reads: a file it refuses contradicts nothing.)
//
// The seeds (testdata/seed, written by testdata/mkseeds.sh) are indexes
// made by git: versions 2, 3 and 4, SHA-1 and SHA-256, flags, conflict
// stages, a gitlink, a sparse index, a path longer than 4095 bytes.
//
//	go test ./gitcore/internal/index -run '^$' -fuzz FuzzIndex -fuzztime 30s
func FuzzIndex(f *testing.F) {
	for _, seed := range testrepo.Seeds(f, "testdata/seed/*.index") {
		format, oidLen := byte(0), 20
		if strings.HasSuffix(seed.Path, ".sha256.index") {
			format, oidLen = 1, 32
		}
		f.Add(append([]byte{format}, seed.Data[:len(seed.Data)-oidLen]...))
	}
	tmp := f.TempDir()
	oracles := map[int]string{20: oracleRepo(f, "sha1", tmp), 32: oracleRepo(f, "sha256", tmp)}

	f.Fuzz(func(t *testing.T, in []byte) {
		if len(in) == 0 {
			return
		}
		oidLen := 20
		if in[0]&1 == 1 {
			oidLen = 32
		}

		data := withChecksum(in[1:], oidLen)
		got, ok := ours(data, oidLen)
		if !ok {
			return // refused: git is never contradicted
		}

		file := filepath.Join(tmp, fmt.Sprintf("index-%d", os.Getpid()))
		if err := os.WriteFile(file, data, 0o644); err != nil {
			t.Fatal(err)
		}
		want, gitOK := lsFiles(t, oracles[oidLen], file)

		switch {
		case !gitOK:
			t.Fatalf("git refuses the index, ours reads it:\n%q", got)
		case got != want:
			t.Fatalf("ours:\n%q\ngit:\n%q", got, want)
		}
	})
}

// ours prints the index as `git ls-files --stage --debug -z` does; ok is
// false when the iterator refuses the file, or it has a required
// extension other than a sparse index's (git reads a split index's
// entries from another file).
func ours(data []byte, oidLen int) (string, bool) {
	it, ok := Entries(data, oidLen)
	if !ok {
		return "", false
	}
	var b strings.Builder
	for it.Next() {
		e := it.Entry()
		fmt.Fprintf(&b, "%06o %s %d\t%s\x00", e.Mode, hex.EncodeToString(e.OID), e.Stage(), e.Path)
		fmt.Fprintf(&b, "  ctime: %d:%d\n  mtime: %d:%d\n", e.CtimeSec, e.CtimeNsec, e.MtimeSec, e.MtimeNsec)
		fmt.Fprintf(&b, "  dev: %d\tino: %d\n  uid: %d\tgid: %d\n", e.Dev, e.Ino, e.UID, e.GID)
		fmt.Fprintf(&b, "  size: %d\tflags: %x\n", e.Size, uint32(e.Flags)|uint32(e.ExtFlags)<<16)
	}
	exts, ok := it.Extensions()
	for _, x := range exts {
		if x.Required() && x.Sig != "sdir" {
			return "", false
		}
	}
	return b.String(), ok
}

func withChecksum(body []byte, oidLen int) []byte {
	out := append([]byte(nil), body...)
	if oidLen == 32 {
		sum := sha256.Sum256(body)
		return append(out, sum[:]...)
	}
	sum := sha1.Sum(body)
	return append(out, sum[:]...)
}

// oracleRepo makes the repository git reads the fuzzed indexes in: a
// sparse checkout in cone mode with a sparse index allowed and every path
// in the cone, so that git neither expands a sparse index's directories
// (it would need their trees) nor collapses any.
func oracleRepo(f testing.TB, format, parent string) string {
	f.Helper()

	dir := filepath.Join(parent, format)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		f.Fatal(err)
	}
	for _, args := range [][]string{
		{"init", "-q", "--object-format=" + format},
		{"config", "core.sparseCheckout", "true"},
		{"config", "core.sparseCheckoutCone", "true"},
		{"config", "index.sparse", "true"},
	} {
		if _, ok := testrepo.Oracle(f, dir, nil, args...); !ok {
			f.Fatalf("git %v failed", args)
		}
	}

	if err := os.WriteFile(filepath.Join(dir, ".git", "info", "sparse-checkout"), []byte("/*\n"), 0o644); err != nil {
		f.Fatal(err)
	}
	return dir
}

// lsFiles is git's reading of the index file: ok false when git refuses it.
func lsFiles(t *testing.T, repo, file string) (string, bool) {
	t.Helper()
	return testrepo.Oracle(t, repo, []string{"GIT_INDEX_FILE=" + file}, "ls-files", "--sparse", "--stage", "--debug", "-z")
}

// Every seed, an index git wrote, is read by both, alike: the fuzz test
// starts from files it compares, not from ones it skips.
func TestSeedsReadLikeGit(t *testing.T) {
	seeds := testrepo.Seeds(t, "testdata/seed/*.index")
	if len(seeds) < 15 {
		t.Fatalf("%d seeds", len(seeds))
	}
	dir := t.TempDir()
	for _, seed := range seeds {
		p := seed.Path
		format, oidLen := "sha1", 20
		if strings.HasSuffix(p, ".sha256.index") {
			format, oidLen = "sha256", 32
		}
		repo := filepath.Join(dir, format)
		if _, err := os.Stat(repo); err != nil {
			repo = oracleRepo(t, format, dir)
		}
		abs, _ := filepath.Abs(p)
		want, gitOK := lsFiles(t, repo, abs)
		got, ok := ours(seed.Data, oidLen)
		if !gitOK || !ok || got != want || got == "" {
			t.Errorf("%s: git %v, ours %v\nours:\n%q\ngit:\n%q", p, gitOK, ok, got, want)
		}
	}
}
