package configfile

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// FuzzConfigFile compares the parser with git's own on one file:
// `git config -l -z --file` (which follows no include). On every file both
// read, the entries are git's; a file git refuses must be refused here
// too (a refusal of a file git reads is allowed: the caller then asks
// git). Seeds: testdata/seed/*.config.
//
//	go test ./gitcore/internal/configfile -run '^$' -fuzz FuzzConfigFile -fuzztime 30s
func FuzzConfigFile(f *testing.F) {
	seeds, err := filepath.Glob("testdata/seed/*.config")
	if err != nil || len(seeds) == 0 {
		f.Fatalf("no seeds: %v", err)
	}
	for _, p := range seeds {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		got, ok := Parse(data)
		if !ok {
			return // refused: the caller asks git, nothing is contradicted
		}
		file := filepath.Join(dir, "config-"+itoa(os.Getpid()))
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

func itoa(n int) string {
	var b []byte
	for n > 0 || len(b) == 0 {
		b = append([]byte{byte('0' + n%10)}, b...)
		n /= 10
	}
	return string(b)
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
	cmd := exec.Command("git", "config", "-l", "-z", "--file", file)
	cmd.Dir = home
	cmd.Env = []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "GIT_CONFIG_NOSYSTEM=1",
		"GIT_CONFIG_GLOBAL=/dev/null", "LC_ALL=C"}
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		var exitErr *exec.ExitError
		if !errors.As(err, &exitErr) {
			t.Fatal(err)
		}
		return nil, false
	}
	var list []Entry
	for _, rec := range strings.Split(out.String(), "\x00") {
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
	seeds, _ := filepath.Glob("testdata/seed/*.config")
	dir := t.TempDir()
	for _, p := range seeds {
		data, _ := os.ReadFile(p)
		abs, _ := filepath.Abs(p)
		want, gitOK := gitList(t, dir, abs)
		got, ok := Parse(data)
		bad := strings.HasPrefix(filepath.Base(p), "bad-")
		if gitOK == bad || ok != gitOK || !reflect.DeepEqual(normal(got), want) {
			t.Errorf("%s: git %v %q, ours %v %q", p, gitOK, want, ok, got)
		}
	}
}
