package cli

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/git-agency/git-agency/agency"
)

// printJSON writes v as indented JSON and a newline.
func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// table prints rows: aligned with a header on a terminal, tab-separated
// without one (scripts split on tabs).
type table struct {
	env    *Env
	header []string
	rows   [][]string
}

func newTable(env *Env, header ...string) *table { return &table{env: env, header: header} }

func (t *table) add(cols ...string) { t.rows = append(t.rows, cols) }

func (t *table) flush() {
	if !t.env.StdoutTTY {
		// One write, not one per row: a long history is a thousand rows.
		w := bufio.NewWriter(t.env.Stdout)
		for _, r := range t.rows {
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
