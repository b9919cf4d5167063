package stream

import (
	"path/filepath"
	"strings"
	"unicode/utf8"
)

// summaryRunes is how many runes of message text a summary keeps.
const summaryRunes = 120

// oneLine collapses every run of whitespace (newlines included) to a space.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// cut shortens s to at most n runes, marking the cut with "…".
func cut(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// text is the one-line, cut summary of a message text.
func text(s string) string { return cut(oneLine(s), summaryRunes) }

// rel shows path relative to dir when it lies inside it.
func rel(dir, path string) string {
	if dir == "" || !filepath.IsAbs(path) {
		return path
	}
	if r, err := filepath.Rel(dir, path); err == nil && !strings.HasPrefix(r, "..") {
		return r
	}
	return path
}
