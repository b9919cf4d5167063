package gitcore

import (
	"regexp"
	"strings"
)

// IgnoreMatcher matches repository-relative paths against patterns in
// gitignore syntax (as in a .gitignore at the root): `#` comments, `!`
// negation (the last matching pattern wins), a trailing `/` for
// directories only, a leading or inner `/` to anchor at the root, `*`,
// `?` and `[...]` within one path component, and `**/`, `/**` and `/**/`
// across components. A path inside a matching directory matches, and a
// negation cannot bring it back (git cannot either). Matching is
// case-sensitive, as git's is by default.
type IgnoreMatcher struct {
	rules []ignoreRule
}

type ignoreRule struct {
	re      *regexp.Regexp
	negate  bool
	dirOnly bool
}

// NewIgnoreMatcher compiles patterns; invalid ones are skipped. It returns
// nil (which matches nothing) when there is no valid pattern.
func NewIgnoreMatcher(patterns []string) *IgnoreMatcher {
	m := &IgnoreMatcher{}
	for _, p := range patterns {
		if r, ok := compileIgnore(p); ok {
			m.rules = append(m.rules, r)
		}
	}
	if len(m.rules) == 0 {
		return nil
	}
	return m
}

// match reports whether path (slash-separated, relative to the root; a
// directory when isDir) is matched: itself, or one of its leading
// directories.
func (m *IgnoreMatcher) match(path string, isDir bool) bool {
	if m == nil {
		return false
	}
	path = strings.Trim(path, "/")
	for i := 0; i < len(path); i++ {
		if path[i] == '/' && m.matchOne(path[:i], true) {
			return true
		}
	}
	return m.matchOne(path, isDir)
}

func (m *IgnoreMatcher) matchOne(path string, isDir bool) bool {
	matched := false
	for _, r := range m.rules {
		if r.dirOnly && !isDir {
			continue
		}
		if r.re.MatchString(path) {
			matched = !r.negate
		}
	}
	return matched
}

func compileIgnore(p string) (ignoreRule, bool) {
	var r ignoreRule

	// Trailing spaces are dropped unless escaped with a backslash.
	for strings.HasSuffix(p, " ") && !strings.HasSuffix(p, `\ `) {
		p = p[:len(p)-1]
	}
	if p == "" || p[0] == '#' {
		return r, false
	}

	if p[0] == '!' {
		r.negate, p = true, p[1:]
	} else if p[0] == '\\' && len(p) > 1 && (p[1] == '!' || p[1] == '#') {
		p = p[1:]
	}

	if strings.HasSuffix(p, "/") {
		r.dirOnly, p = true, strings.TrimRight(p, "/")
	}
	if p == "" {
		return r, false
	}

	anchored := strings.Contains(p, "/")
	p = strings.TrimPrefix(p, "/")
	var b strings.Builder
	b.WriteString("^")
	if !anchored {
		b.WriteString("(?:.*/)?")
	}

	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case strings.HasPrefix(p[i:], "**/") && (i == 0 || p[i-1] == '/'):
			b.WriteString("(?:.*/)?")
			i += 2
		case p[i:] == "**" && (i == 0 || p[i-1] == '/'):
			b.WriteString(".*")
			i++
		case c == '*':
			b.WriteString("[^/]*")
		case c == '?':
			b.WriteString("[^/]")
		case c == '[':
			j := i + 1
			if j < len(p) && (p[j] == '!' || p[j] == '^') {
				j++
			}
			if j < len(p) && p[j] == ']' {
				j++
			}
			for j < len(p) && p[j] != ']' {
				j++
			}

			if j >= len(p) {
				b.WriteString(`\[`)
				continue
			}

			class := p[i+1 : j]
			if class != "" && (class[0] == '!' || class[0] == '^') {
				class = "^" + class[1:]
			}

			b.WriteString("[" + strings.ReplaceAll(class, `\`, `\\`) + "]")
			i = j
		case c == '\\' && i+1 < len(p):
			i++
			b.WriteString(regexp.QuoteMeta(string(p[i])))
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}

	b.WriteString("$")
	re, err := regexp.Compile(b.String())
	if err != nil {
		return r, false
	}

	r.re = re
	return r, true
}
