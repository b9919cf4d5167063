package core

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// Plural is "1 commit", "2 commits".
func Plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// ShortSHA is the first 12 characters of an object or invocation id.
func ShortSHA(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}

// Ago renders a duration as "3m ago".
func Ago(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds ago", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm ago", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh ago", int(d.Hours()))
	default:
		return fmt.Sprintf("%dd ago", int(d.Hours()/24))
	}
}

// FirstLine is s's first non-blank line, trimmed, cut to 72 characters.
func FirstLine(s string) string {
	for _, l := range strings.Split(s, "\n") {
		l = strings.Join(strings.Fields(l), " ")
		if l == "" {
			continue
		}
		if utf8.RuneCountInString(l) > 72 {
			l = string([]rune(l)[:71]) + "…"
		}
		return l
	}
	return ""
}
