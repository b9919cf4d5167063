package configfile

import "bytes"

// Parse reads one git config file as git's own parser does
// (config.c: git_parse_source, get_base_var, get_value, parse_value) and
// returns every entry in order, keys as git names them (section and
// variable lower case, a quoted subsection as written, a legacy
// [section.sub] lower case), a variable without "=" with the value "" (as
// `git config -z` prints it to gitcore's parseConfigZ). ok is false wherever git
// would stop with an error, and for what this reader does not follow: a
// NUL byte.
func Parse(data []byte) ([]Entry, bool) {
	p := &configParser{data: data}
	if len(data) >= 3 && data[0] == 0xef && data[1] == 0xbb && data[2] == 0xbf {
		p.pos = 3 // a UTF-8 byte order mark, skipped as git does
	}

	for {
		c := p.next()
		if c == '\n' && p.eof {
			return p.out, !p.bad
		}
		if !p.top(c) || p.bad {
			return nil, false
		}
	}
}

// top takes the character c read between entries: a line's end, a
// comment, a section header or the first letter of a variable.
func (p *configParser) top(c byte) bool {
	switch {
	case c == '\n':
		p.comment = false
	case p.comment || configSpace(c):
	case c == '#' || c == ';':
		p.comment = true
	case c == '[':
		name, ok := p.section()
		if !ok || name == "" {
			return false
		}
		p.sect = name + "."
	case !configAlpha(c) || p.sect == "":
		return false
	default:
		e, ok := p.entry(p.sect, c)
		if !ok {
			return false
		}
		p.out = append(p.out, e)
	}

	return true
}

// configParser walks a config file byte by byte (git's get_next_char: a
// CR before LF is dropped, the end of the file reads as a final LF).
type configParser struct {
	data []byte
	pos  int
	eof  bool
	bad  bool // a NUL byte: git stops reading there; we ask git instead
	// sect is the current section ("name." or "name.sub."), comment:
	// inside a comment; out: the entries so far.
	sect    string
	comment bool
	out     []Entry
}

func (p *configParser) next() byte {
	if p.pos >= len(p.data) {
		p.eof = true
		return '\n'
	}

	c := p.data[p.pos]
	p.pos++
	if c == 0 {
		p.bad, p.eof = true, true
		return '\n'
	}

	if c == '\r' && p.pos < len(p.data) && p.data[p.pos] == '\n' {
		p.pos++
		return '\n'
	}

	return c
}

// section reads a section header after its '[': "name" or
// "name.subsection" (git's get_base_var and get_extended_base_var).
func (p *configParser) section() (string, bool) {
	var name []byte
	for {
		c := p.next()

		if p.eof {
			return "", false
		}

		switch {
		case c == ']':
			return string(name), true
		case configSpace(c):
			return p.subsection(name, c)
		case !configKeyChar(c) && c != '.':
			return "", false
		}

		name = append(name, configLower(c))
	}
}

// subsection reads the ` "subsection"]` part of a header; c is the space
// that began it.
func (p *configParser) subsection(name []byte, c byte) (string, bool) {
	for configSpace(c) {
		if c == '\n' {
			return "", false
		}
		c = p.next()
	}

	if c != '"' {
		return "", false
	}

	name = append(name, '.')
	for {
		c := p.next()
		if c == '\n' {
			return "", false
		}
		if c == '"' {
			break
		}

		if c == '\\' {
			if c = p.next(); c == '\n' {
				return "", false
			}
		}

		name = append(name, c)
	}

	return string(name), p.next() == ']'
}

// entry reads a variable (its first letter is c) and its value (git's
// get_value).
func (p *configParser) entry(section string, c byte) (Entry, bool) {
	name := []byte(section)
	name = append(name, configLower(c))
	for {
		c = p.next()
		if p.eof || !configKeyChar(c) {
			break
		}
		name = append(name, configLower(c))
	}

	for c == ' ' || c == '\t' {
		c = p.next()
	}
	if c == '\n' {
		return Entry{Key: string(name)}, true
	}
	if c != '=' {
		return Entry{}, false
	}

	v, ok := p.value()
	return Entry{Key: string(name), Value: v}, ok
}

// value reads a value up to its line's end (git's parse_value): quotes
// kept out, escapes \n \t \b \\ \" and a backslash before the line's end
// followed, spaces outside quotes kept one for one between words only
// (other whitespace there: ok false), a comment outside quotes ending it.
func (p *configParser) value() (string, bool) {
	var v, gap []byte
	quote, comment := false, false
	for {
		c := p.next()
		switch {
		case c == '\n':
			return string(v), !quote
		case comment:
			continue
		case configSpace(c) && !quote:
			if len(v) > 0 {
				gap = append(gap, c)
			}
			continue
		case !quote && (c == ';' || c == '#'):
			comment = true
			continue
		}

		// The whitespace between two words. A tab (or lone CR) there is
		// not followed: git before 2.46 reads it as a space, later git
		// keeps it; the git that runs is asked.
		if len(bytes.Trim(gap, " ")) > 0 {
			return "", false
		}
		v, gap = append(v, gap...), gap[:0]

		switch c {
		case '\\':
			e, keep, ok := p.escape()
			if !ok {
				return "", false
			}
			if keep {
				v = append(v, e)
			}
		case '"':
			quote = !quote
		default:
			v = append(v, c)
		}
	}
}

// escape reads what follows a backslash in a value: the character it
// stands for (keep), nothing for a line's end (the value goes on), ok
// false for an escape git rejects.
func (p *configParser) escape() (c byte, keep, ok bool) {
	switch c = p.next(); c {
	case '\n':
		return 0, false, true
	case 't':
		return '\t', true, true
	case 'b':
		return '\b', true, true
	case 'n':
		return '\n', true, true
	case '\\', '"':
		return c, true, true
	}

	return 0, false, false
}

// configSpace is git's isspace: space, tab, LF and CR only.
func configSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func configAlpha(c byte) bool { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') }

func configKeyChar(c byte) bool { return configAlpha(c) || (c >= '0' && c <= '9') || c == '-' }

func configLower(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}
