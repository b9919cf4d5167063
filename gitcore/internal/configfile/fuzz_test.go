package configfile

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/git-agency/git-agency/internal/testrepo"
)

// FuzzConfigFile compares the parser with git's own on one file:
// `git config -l -z --file` (which follows no include). On every file both
// read, the entries are git's; a file git refuses must be refused here
// too (a refusal of a file git reads is allowed: the caller then asks
// git). Seeds: testdata/seed/*.config.
//
//	go test ./gitcore/internal/configfile -run '^$' -fuzz FuzzConfigFile -fuzztime 30s
func FuzzConfigFile(f *testing.F) {
	for _, seed := range testrepo.Seeds(f, "testdata/seed/*.config") {
		f.Add(seed.Data)
	}
	dir := f.TempDir()

	f.Fuzz(func(t *testing.T, data []byte) {
		got, ok := Parse(data)
		if !ok {
			return // refused: the caller asks git, nothing is contradicted
		}

		file := filepath.Join(dir, fmt.Sprintf("config-%d", os.Getpid()))
		if err := os.WriteFile(file, data, 0o644); err != nil {
			t.Fatal(err)
		}
		want, gitOK := gitList(t, dir, file)

		switch {
		case !gitOK:
			t.Fatalf("git refuses the file, ours reads %q", got)
		case !reflect.DeepEqual(normal(got), want):
			t.Fatalf("ours %q\ngit  %q", got, want)
		}
	})
}

// normal is entries as compared: nil for none.
func normal(e []Entry) []Entry {
	if len(e) == 0 {
		return nil
	}
	return e
}

// gitList is git's reading of file; ok false when git refuses it.
func gitList(t *testing.T, home, file string) ([]Entry, bool) {
	t.Helper()

	out, ok := testrepo.Oracle(t, home, nil, "config", "-l", "-z", "--file", file)
	if !ok {
		return nil, false
	}

	var list []Entry
	for _, rec := range strings.Split(out, "\x00") {
		if rec == "" {
			continue
		}
		k, v, _ := strings.Cut(rec, "\n")
		list = append(list, Entry{Key: k, Value: v})
	}
	return list, true
}

// Every seed is read as git reads it, or refused by both (the two bad-*
// seeds).
func TestSeedsReadLikeGit(t *testing.T) {
	dir := t.TempDir()
	for _, seed := range testrepo.Seeds(t, "testdata/seed/*.config") {
		p := seed.Path
		abs, _ := filepath.Abs(p)
		want, gitOK := gitList(t, dir, abs)
		got, ok := Parse(seed.Data)
		bad := strings.HasPrefix(filepath.Base(p), "bad-")
		if gitOK == bad || ok != gitOK || !reflect.DeepEqual(normal(got), want) {
			t.Errorf("%s: git %v %q, ours %v %q", p, gitOK, want, ok, got)
		}
	}
}
