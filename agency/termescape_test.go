package agency

import (
	"strings"
	"testing"
)

func TestTermEscape(t *testing.T) {
	for in, want := range map[string]string{
		"plain text, ünïcode…\n\tok": "plain text, ünïcode…\n\tok",
		"\x1b]52;c;aGk=\x07":         "^[]52;c;aGk=^G",
		"\x1b[2J\x1bc\r\x7f":         "^[[2J^[c^M^?",
		"\u009b6n":                   "M-^[6n",
		"bad \x9b byte":              "bad M-^[ byte",
	} {
		if got := TermEscape(in); got != want {
			t.Errorf("TermEscape(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestTermEscapeWriterSplitsCharacters(t *testing.T) {
	var b strings.Builder
	w := termEscapeWriter(&b)
	in := []byte("é\u009b\x1b…")
	for i := range in {
		w.Write(in[i : i+1])
	}
	if got, want := b.String(), "éM-^[^[…"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
