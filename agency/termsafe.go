package agency

import (
	"bytes"
	"io"
)

// A headed agent's pane.log is what its TUI wrote to its terminal: drawing,
// but also queries (`ESC [ c`, `ESC [ 6 n`, `OSC 10 ; ?`) that a terminal
// answers by typing the reply into whatever reads it next (the user's
// shell, once a replay ends), and mode switches that stay (mouse reporting,
// the alternate screen, keyboard protocols, the clipboard). termFilter
// passes such output on without them.
//
// In draw mode (agent logs --follow) drawing is kept: colours, cursor
// movement, erasing, cursor visibility. In text mode (a log shown as text)
// every escape sequence and control character but newline and tab goes.

// maxEscape bounds a sequence: a longer one is not one, its ESC is dropped.
const maxEscape = 4096

// termFilter is an io.Writer; a sequence split between two writes is held
// back until it is whole.
type termFilter struct {
	w       io.Writer
	text    bool
	pending []byte
}

func (f *termFilter) Write(p []byte) (int, error) {
	buf := append(f.pending, p...)
	f.pending = nil
	out := make([]byte, 0, len(buf))
	for i := 0; i < len(buf); {
		c := buf[i]
		if c != 0x1b {
			if !f.text || c >= 0x20 || c == '\n' || c == '\t' {
				out = append(out, c)
			}
			i++
			continue
		}

		n, keep := escapeAt(buf[i:])
		if n == 0 {
			if len(buf)-i < maxEscape {
				f.pending = append([]byte(nil), buf[i:]...)
				break
			}
			n = 1 // not a sequence: drop the ESC
		}

		if keep && !f.text {
			out = append(out, buf[i:i+n]...)
		}

		i += n
	}

	if _, err := f.w.Write(out); err != nil {
		return 0, err
	}

	return len(p), nil
}

// escapeAt measures the escape sequence at b (b[0] is ESC): its length (0
// when b ends before it does) and whether drawing keeps it.
func escapeAt(b []byte) (n int, keep bool) {
	if len(b) < 2 {
		return 0, false
	}

	switch b[1] {
	case '[':
		return csiAt(b)
	case ']', 'P', 'X', '^', '_':
		// OSC, DCS, SOS, PM, APC: up to BEL or ST. Titles, colour and
		// clipboard queries, status reports: none is drawing.
		for j := 2; j < len(b); j++ {
			switch {
			case b[j] == 0x07:
				return j + 1, false
			case b[j] == 0x1b && j+1 < len(b) && b[j+1] == '\\':
				return j + 2, false
			case b[j] == 0x1b && j+1 == len(b):
				return 0, false
			}
		}

		return 0, false
	case '(', ')', '*', '+':
		if len(b) < 3 {
			return 0, false
		}
		return 3, true // character set
	case 'c':
		return 2, false // full reset
	}

	return 2, true // ESC 7, ESC 8, ESC =, …
}

// csiAt measures a control sequence (ESC [ params intermediates final).
func csiAt(b []byte) (int, bool) {
	j := 2
	for j < len(b) && b[j] >= 0x30 && b[j] <= 0x3f {
		j++
	}

	params := b[2:j]
	k := j
	for k < len(b) && b[k] >= 0x20 && b[k] <= 0x2f {
		k++
	}

	if k == len(b) {
		return 0, false
	}

	final := b[k]
	if final < 0x40 || final > 0x7e {
		return k, false // malformed: dropped up to here
	}

	return k + 1, drawingCSI(params, b[j:k], final)
}

// drawingCSI says whether a control sequence only draws: no report asked
// for (device attributes c, status n, window reports t, mode reports $p,
// DECREQTPARM x), no private or keyboard mode left set, except cursor
// visibility (?25) and synchronized output (?2026).
func drawingCSI(params, inter []byte, final byte) bool {
	if len(params) > 0 && bytes.IndexByte([]byte("<=>"), params[0]) >= 0 {
		return false // keyboard protocols, secondary attributes, XTVERSION
	}
	if len(inter) > 0 && final == 'p' {
		return false // DECRQM
	}

	switch final {
	case 'c', 'n', 't', 'x':
		return false
	case 'h', 'l':
		if len(params) > 0 && params[0] == '?' {
			p := string(params[1:])
			return p == "25" || p == "2026"
		}
	case 'u':
		return len(params) == 0 // restore cursor; ?u is a query
	}

	return true
}
