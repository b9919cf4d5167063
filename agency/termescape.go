package agency

import (
	"io"
	"strings"
	"unicode/utf8"
)

// An agent's text (its summary, its error, its output) is the agent's: a
// clipboard write (OSC 52), a new window title or a cleared screen in it
// must not reach the user's terminal from `agent ls`, `show`, `logs` or
// watch. TermEscape shows every control character but newline and tab as
// cat -v does: ESC as ^[, BEL as ^G, DEL as ^?, a C1 control (U+0080 to
// U+009F, which some terminals obey as ESC+letter) as M-^[ and the like.
// `agent logs --raw` prints the bytes as they are.

// TermEscape is s with its control characters escaped (see above).
func TermEscape(s string) string {
	if !needsEscape(s) {
		return s
	}
	var b strings.Builder
	escapeTo(&b, []byte(s), true)
	return b.String()
}

// needsEscape reports whether s holds a character TermEscape changes.
func needsEscape(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 && c != '\n' && c != '\t' || c == 0x7f || c == 0xc2 || c >= 0x80 && c <= 0x9f {
			return true
		}
	}
	return false
}

// escapeTo writes p escaped to b and returns how many bytes of p it
// consumed: all of them when final, else all but an incomplete UTF-8
// character at the end (the next write completes it).
func escapeTo(b *strings.Builder, p []byte, final bool) int {
	i := 0
	for i < len(p) {
		c := p[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '\n' || c == '\t' || c >= 0x20 && c != 0x7f:
				b.WriteByte(c)
			case c == 0x7f:
				b.WriteString("^?")
			default:
				b.WriteByte('^')
				b.WriteByte(c + 0x40)
			}

			i++
			continue
		}

		if !final && !utf8.FullRune(p[i:]) {
			return i
		}

		r, n := utf8.DecodeRune(p[i:])
		switch {
		case r >= 0x80 && r <= 0x9f:
			b.WriteString("M-^")
			b.WriteByte(byte(r) - 0x80 + 0x40)
		case r == utf8.RuneError && n == 1 && c <= 0x9f:
			b.WriteString("M-^")
			b.WriteByte(c - 0x80 + 0x40)
		default:
			b.Write(p[i : i+n])
		}

		i += n
	}

	return i
}

// termEscaper is an io.Writer that escapes what passes through it; a
// UTF-8 character split between two writes is held back until it is
// whole.
type termEscaper struct {
	w       io.Writer
	pending []byte
}

// termEscapeWriter is w behind TermEscape.
func termEscapeWriter(w io.Writer) io.Writer { return &termEscaper{w: w} }

func (e *termEscaper) Write(p []byte) (int, error) {
	buf := append(e.pending, p...)
	var b strings.Builder
	n := escapeTo(&b, buf, false)
	e.pending = append([]byte(nil), buf[n:]...)
	if _, err := io.WriteString(e.w, b.String()); err != nil {
		return 0, err
	}

	return len(p), nil
}
