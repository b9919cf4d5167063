package houserules

import (
	"strings"
	"testing"
)

// The big-function list fails on a stale line (a function gone or within
// the limits now) and on an added one (a list longer than its ceiling), and
// asks for the ceiling to come down when a line is taken off.
func TestKnownListIsARatchet(t *testing.T) {
	const list = "# ceiling: 2\na.go Big\nb.go T.Huge\n"
	bothBig := map[string]bool{"a.go Big": true, "b.go T.Huge": true}
	cases := []struct {
		name string
		text string
		seen map[string]bool
		want string // "" = no problem
	}{
		{"clean", list, bothBig, ""},
		{"stale", list, map[string]bool{"a.go Big": true}, `lists "b.go T.Huge", which is within the limits now (or gone)`},
		{"added", list + "c.go New\n", map[string]bool{"a.go Big": true, "b.go T.Huge": true, "c.go New": true}, "lists 3 functions, over its ceiling of 2"},
		{"duplicate", list + "a.go Big\n", bothBig, `lists "a.go Big" twice`},
		{"taken off, ceiling kept", "# ceiling: 2\na.go Big\n", map[string]bool{"a.go Big": true}, "lower the ceiling to 1"},
		{"no ceiling", "a.go Big\n", map[string]bool{"a.go Big": true}, "no \"# ceiling: N\" line"},
	}
	for _, c := range cases {
		known, err := parseKnown(c.text)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		problems := checkKnown(known, c.seen)
		got := strings.Join(problems, "\n")
		if c.want == "" && got != "" || c.want != "" && !strings.Contains(got, c.want) {
			t.Errorf("%s: problems %q, want one containing %q", c.name, got, c.want)
		}
		if c.want != "" && len(problems) != 1 {
			t.Errorf("%s: %d problems, want 1: %q", c.name, len(problems), problems)
		}
	}
}
