package houserules

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// outsideDocs are pointers to documents a reader of the repository does
// not have: the design notes, issue and review numbers the code was once
// written against. A comment says what the code does and why, in the
// repository's own terms (docs/ and the code), instead.
var outsideDocs = regexp.MustCompile(`\b[Tt]he spec\b|\bspecs?(?:'s|:|\s+")|\(spec\b|(?i:\bissues?\s*#?\d+|\bPR-?\d+\b|\bslice design\b|\bslice\s+\d+\b|\bdecision\s+#?\d+\b)|\b\d{3}_[a-z0-9_]+\.txt\b|/work/shared|\bARCHITECTURE\.md\b|\bSTYLE\.md\b`)

// TestCommentsPointAtNoOutsideDocument: no Go comment points at a design
// note, an issue or review number, or another document the repository
// does not contain.
func TestCommentsPointAtNoOutsideDocument(t *testing.T) {
	for _, g := range moduleFiles(t) {
		for _, cg := range g.f.Comments {
			for _, c := range cg.List {
				for i, line := range strings.Split(c.Text, "\n") {
					if m := outsideDocs.FindString(line); m != "" {
						p := g.fset.Position(c.Pos())
						t.Errorf("%s/%s:%d: comment points at %q, which the repository does not contain: say what the code does and why instead",
							g.dir, g.name, p.Line+i, m)
					}
				}
			}
		}
	}
}

// The same for the comments of the test scripts and shell scripts (lines
// starting with '#').
func TestScriptCommentsPointAtNoOutsideDocument(t *testing.T) {
	var files []string
	for _, glob := range []string{"testdata/scripts/*.txtar", "e2e/*.sh", "bench/*.sh", "demo/*.sh"} {
		m, err := filepath.Glob(filepath.Join("../..", glob))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	if len(files) < 20 {
		t.Fatalf("found only %d scripts: the globs are wrong", len(files))
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(b), "\n") {
			if !strings.HasPrefix(strings.TrimSpace(line), "#") {
				continue
			}
			if m := outsideDocs.FindString(line); m != "" {
				t.Errorf("%s:%d: comment points at %q, which the repository does not contain", strings.TrimPrefix(f, "../../"), i+1, m)
			}
		}
	}
}
