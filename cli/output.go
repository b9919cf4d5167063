package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/git-agency/git-agency/agency"
)

// printJSON writes v as indented JSON and a newline, byte for byte what an
// Encoder with SetIndent("", "  ") and SetEscapeHTML(false) writes. It
// encodes compactly and indents with indentJSON: the Encoder's own
// re-indenting runs a validating scanner over every byte and was most of
// `agent ls --json`'s cost at a thousand records.
func printJSON(w io.Writer, v any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	_, err := w.Write(indentJSON(buf.Bytes()))
	return err
}

// indentJSON indents valid compact JSON (as json.Marshal writes it: no
// insignificant white space) with two spaces per level, like json.Indent:
// empty objects and arrays stay "{}" and "[]", a colon is followed by one
// space. Anything after the value (the Encoder's newline) is kept.
func indentJSON(src []byte) []byte {
	out := make([]byte, 0, len(src)+len(src)/2)
	depth := 0
	newline := func() {
		out = append(out, '\n')
		for i := 0; i < depth; i++ {
			out = append(out, ' ', ' ')
		}
	}
	for i := 0; i < len(src); i++ {
		c := src[i]
		switch c {
		case '"':
			j := i + 1
			for j < len(src) && src[j] != '"' {
				if src[j] == '\\' {
					j++
				}
				j++
			}

			out = append(out, src[i:j+1]...)
			i = j
		case '{', '[':
			if i+1 < len(src) && (src[i+1] == '}' || src[i+1] == ']') {
				out = append(out, c, src[i+1])
				i++
				continue
			}

			out = append(out, c)
			depth++
			newline()
		case '}', ']':
			depth--
			newline()
			out = append(out, c)
		case ',':
			out = append(out, c)
			newline()
		case ':':
			out = append(out, c, ' ')
		default:
			out = append(out, c)
		}
	}

	return out
}

// table prints rows: aligned with a header on a terminal, tab-separated
// without one (scripts split on tabs).
type table struct {
	env    *Env
	header []string
	rows   [][]string
	// lead is put before every row without a terminal (--all-repos: the
	// repository's path, in place of the headings a terminal shows).
	lead []string
}

func newTable(env *Env, header ...string) *table { return &table{env: env, header: header} }

// add adds a row; agent text in it is shown escaped (agency.TermEscape).
func (t *table) add(cols ...string) {
	for i := range cols {
		cols[i] = agency.TermEscape(cols[i])
	}
	t.rows = append(t.rows, cols)
}

func (t *table) flush() {
	if !t.env.StdoutTTY {
		// One write, not one per row: a long history is a thousand rows.
		w := bufio.NewWriter(t.env.Stdout)
		for _, r := range t.rows {
			if len(t.lead) > 0 {
				r = append(t.lead[:len(t.lead):len(t.lead)], r...)
			}
			fmt.Fprintln(w, strings.Join(r, "\t"))
		}

		w.Flush()
		return
	}

	tw := tabwriter.NewWriter(t.env.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(t.header, "\t"))
	for _, r := range t.rows {
		fmt.Fprintln(tw, strings.Join(r, "\t"))
	}

	tw.Flush()
}

// when formats an RFC3339 time: as is without a terminal, relative on one.
func (env *Env) when(ts string) string {
	if ts == "" {
		return "-"
	}
	if !env.StdoutTTY {
		return ts
	}
	t, err := time.Parse(time.RFC3339, ts)
	if err != nil {
		return ts
	}
	return agency.Ago(time.Since(t))
}

// nonNil makes an empty list print as [] in JSON, not null.
func nonNil(ss []string) []string {
	if ss == nil {
		return []string{}
	}
	return ss
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
