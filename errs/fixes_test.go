package errs

import (
	"flag"
	"os"
	"sort"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the generated table of docs/errors.md")

// Every code declared in errs.go says what to do about it.
func TestEveryCodeHasAFix(t *testing.T) {
	for name, code := range declaredCodes(t) {
		if Fix[code] == "" {
			t.Errorf("%s (%s) has no entry in Fix (errs/fixes.go)", name, code)
		}
	}
}

const (
	pageBegin = "<!-- BEGIN codes: generated from errs/codes.go and errs/fixes.go by 'go test ./errs -run TestErrorsPage -update' -->"
	pageEnd   = "<!-- END codes -->"
)

// TestErrorsPage: docs/errors.md lists every code with its cause (Meaning)
// and what to do (Fix), as they are written in errs; -update rewrites it.
func TestErrorsPage(t *testing.T) {
	const path = "../docs/errors.md"
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	i, j := strings.Index(text, pageBegin), strings.Index(text, pageEnd)
	if i < 0 || j < i {
		t.Fatalf("%s has no %q … %q section", path, pageBegin, pageEnd)
	}
	want := text[:i] + pageBegin + "\n" + codesTable() + pageEnd + text[j+len(pageEnd):]
	if want == text {
		return
	}
	if *update {
		if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("%s is not what errs/codes.go and errs/fixes.go make: run 'go test ./errs -run TestErrorsPage -update'", path)
}

func codesTable() string {
	codes := make([]string, 0, len(Meaning))
	for c := range Meaning {
		codes = append(codes, string(c))
	}
	sort.Strings(codes)
	var b strings.Builder
	b.WriteString("\n| code | cause | what to do |\n|---|---|---|\n")
	cell := func(s string) string { return strings.ReplaceAll(s, "|", `\|`) }
	for _, c := range codes {
		b.WriteString("| `" + c + "` | " + cell(Meaning[Code(c)]) + " | " + cell(Fix[Code(c)]) + " |\n")
	}
	b.WriteString("\n")
	return b.String()
}
