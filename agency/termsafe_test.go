package agency

import (
	"bytes"
	"os"
	"regexp"
	"strings"
	"testing"
)

// queries are the sequences a terminal answers, as real TUIs send them.
var queries = regexp.MustCompile(`\x1b\[[>=]?c|\x1b\[\??6n|\x1b\[5n|\x1b\]1[01];\?|\x1b\[\?u|\x1b\[>[0-9;]*q|\x1bP\+q|\x1b\[\?[0-9;]*\$p|\x1b\[1[48]t|\x1b\]7501;\?`)

// The real panes of codex 0.169 and claude 2.1.330, fed in chunks of every
// size: no query survives, in draw mode or text mode, and text mode leaves
// no escape at all while the words remain.
func TestTermFilterRealPanes(t *testing.T) {
	for _, name := range []string{"hx2.pane.log", "h-claude3.pane.log", "hx-bgserver.pane.log"} {
		data, err := os.ReadFile("../runner/testdata/" + name)
		if err != nil {
			t.Fatal(err)
		}
		if !queries.Match(data) {
			t.Fatalf("%s: the capture holds no query; the test tests nothing", name)
		}
		for _, chunk := range []int{1, 3, 7, 512, len(data)} {
			for _, text := range []bool{false, true} {
				var out bytes.Buffer
				f := &termFilter{w: &out, text: text}
				for i := 0; i < len(data); i += chunk {
					f.Write(data[i:min(i+chunk, len(data))])
				}
				if m := queries.Find(out.Bytes()); m != nil {
					t.Errorf("%s chunk %d text %v: query %q left", name, chunk, text, m)
				}
				if bytes.Contains(out.Bytes(), []byte("\x1b[?1000h")) || bytes.Contains(out.Bytes(), []byte("\x1b[?1049h")) {
					t.Errorf("%s chunk %d: a mode switch left", name, chunk)
				}
				if text && bytes.IndexByte(out.Bytes(), 0x1b) >= 0 {
					t.Errorf("%s chunk %d: text mode left an escape", name, chunk)
				}
			}
		}
	}
	// Drawing stays in draw mode.
	var out bytes.Buffer
	(&termFilter{w: &out}).Write([]byte("\x1b[1;2H\x1b[1mhi\x1b[0m\x1b[?25l\x1b[c\x1b]0;title\x07 there"))
	if got := out.String(); got != "\x1b[1;2H\x1b[1mhi\x1b[0m\x1b[?25l there" {
		t.Errorf("draw: %q", got)
	}
	out.Reset()
	(&termFilter{w: &out, text: true}).Write([]byte("\x1b[1mDone\x1b[0m: wrote\r\n\x07the file.\n"))
	if got := out.String(); !strings.Contains(got, "Done: wrote\nthe file.") {
		t.Errorf("text: %q", got)
	}
}
