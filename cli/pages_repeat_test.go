package cli

import (
	"io/fs"
	"strings"
	"testing"
	"unicode"

	"github.com/git-agency/git-agency/errs"
)

// A page's Errors item is printed after the code's meaning (errorLine): an
// item that says the meaning again in other words reads as the same thing
// twice ("--require-base, and the integration HEAD moved since the sandbox
// was made. --require-base and the integration HEAD moved; land without
// it, …"). It must add only what this command's user needs: what to do
// here, in one wording. (The code's fix, errs.Fix, is not on the page, so
// the item may say what to do in its own words.)
func TestPageErrorsDoNotRepeatTheCode(t *testing.T) {
	files, err := fs.Glob(pageFiles, "pages/*.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		b, err := fs.ReadFile(pageFiles, f)
		if err != nil {
			t.Fatal(err)
		}
		p := parsePage(strings.TrimSuffix(strings.TrimPrefix(f, "pages/"), ".md"), string(b))
		for _, e := range pageErrors(p.Section("Errors")) {
			code := errs.Code(e.Code)
			if c := repeatedClause(e.Text, errs.Meaning[code]); c != "" {
				t.Errorf("cli/%s: %s: %q says the code's meaning again (errs/codes.go: %q), which the page prints just before it: say only what this command adds", f, e.Code, c, errs.Meaning[code])
			}
		}
	}
}

// repeatedClause is the first clause of text (split at ';', ':' and '. ')
// most of whose words of four or more letters (both of two, 70% of three
// or more) are words of other; "" if none is.
func repeatedClause(text, other string) string {
	have := map[string]bool{}
	for _, w := range words(other) {
		have[w] = true
	}
	clauses := strings.FieldsFunc(strings.ReplaceAll(text, ". ", ";"), func(r rune) bool { return r == ';' || r == ':' })
	for _, c := range clauses {
		ws := words(c)
		n := 0
		for _, w := range ws {
			if have[w] {
				n++
			}
		}
		if len(ws) >= 3 && n*10 >= len(ws)*7 || len(ws) == 2 && n == 2 {
			return strings.TrimSpace(c)
		}
	}
	return ""
}

// words are the lowercase words of four or more letters of s.
func words(s string) []string {
	var out []string
	for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '_' && r != '-' && r != '.'
	}) {
		w = strings.Trim(w, ".-")
		if len(w) >= 4 {
			out = append(out, w)
		}
	}
	return out
}
