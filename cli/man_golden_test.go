package cli

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/alecthomas/kong"
)

var update = flag.Bool("update", false, "rewrite the golden pages in testdata/")

// The man page and the text page of one command (undo: a list, a code
// block, inline code, errors) are what testdata/ holds; rewrite them with
// go test ./cli -run TestGoldenPages -update after changing the renderer
// or the page, and read the diff.
func TestGoldenPages(t *testing.T) {
	t.Setenv("SOURCE_DATE_EPOCH", "1767323045") // 2026-01-02
	old := Version
	Version = "v1.2.3"
	t.Cleanup(func() { Version = old })
	n, p := pageOf(t, &AgencyCLI{}, "undo")
	var man, text bytes.Buffer
	writeManPage(&man, "git agency", n, p)
	writeTextPage(&text, "git agency", n, p)
	golden(t, "git-agency-undo.1", man.Bytes())
	golden(t, "git-agency-undo.txt", text.Bytes())
}

// The man pages' date: SOURCE_DATE_EPOCH, else the one make stamped, else
// the commit's as the Go toolchain recorded it, else none; never now.
func TestPageDate(t *testing.T) {
	vcs := &debug.BuildInfo{Settings: []debug.BuildSetting{{Key: "vcs.time", Value: "2025-03-04T23:59:59Z"}}}
	for _, c := range []struct {
		epoch, build string
		bi           *debug.BuildInfo
		want         string
	}{
		{"1767323045", "0", vcs, "2026-01-02"},
		{"", "0", vcs, "1970-01-01"},
		{"", "", vcs, "2025-03-04"},
		{"junk", "", nil, ""},
		{"", "", &debug.BuildInfo{}, ""},
	} {
		if got := pageDate(c.epoch, c.build, c.bi); got != c.want {
			t.Errorf("pageDate(%q, %q, %v) = %q, want %q", c.epoch, c.build, c.bi != nil, got, c.want)
		}
	}
	t.Setenv("SOURCE_DATE_EPOCH", "86400")
	var b bytes.Buffer
	writeTopicMan(&b, "git-agency-landing", "# Landing\ntext\n")
	if !strings.Contains(b.String(), `"1970-01-02"`) {
		t.Errorf("a topic page ignores SOURCE_DATE_EPOCH:\n%s", b.String())
	}
}

// pageOf is the node and page of prog's command words.
func pageOf(t *testing.T, grammar any, words string) (*kong.Node, *cmdPage) {
	t.Helper()
	k, err := kong.New(grammar)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range visibleLeaves(k.Model) {
		if strings.Join(commandWords(n), " ") == words {
			return n, commandPage("git agency", n)
		}
	}
	t.Fatalf("no command %q", words)
	return nil, nil
}

// golden compares got with testdata/name, or writes it there with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (write it with -update)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from what the renderer writes now (go test ./cli -run TestGoldenPages -update, then read the diff):\n--- want\n%s\n--- got\n%s", path, want, got)
	}
}
