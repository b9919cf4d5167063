package houserules

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// bodyLines counts the lines inside one function body, and the blank ones
// among them: the blank lines that part a function's steps.
type bodyLines struct{ lines, blank int }

func (b bodyLines) share() float64 {
	if b.lines == 0 {
		return 0
	}
	return float64(b.blank) / float64(b.lines)
}

func (b *bodyLines) add(o bodyLines) { b.lines += o.lines; b.blank += o.blank }

// funcBodyLines counts the lines between the braces of fn's body (the
// lines of a multi-line string literal left out: they are data, not code).
func funcBodyLines(fset *token.FileSet, src []string, fn *ast.FuncDecl) bodyLines {
	first := fset.Position(fn.Body.Lbrace).Line + 1
	last := fset.Position(fn.Body.Rbrace).Line - 1
	inString := map[int]bool{}
	ast.Inspect(fn.Body, func(n ast.Node) bool {
		if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
			for l := fset.Position(lit.Pos()).Line + 1; l <= fset.Position(lit.End()).Line; l++ {
				inString[l] = true
			}
		}
		return true
	})

	var b bodyLines
	for l := first; l <= last && l <= len(src); l++ {
		if inString[l] {
			continue
		}
		b.lines++
		if strings.TrimSpace(src[l-1]) == "" {
			b.blank++
		}
	}
	return b
}

// source is the file's lines.
func (g goFile) source(t *testing.T) []string {
	t.Helper()
	data, err := os.ReadFile(g.fset.File(g.f.Pos()).Name())
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(string(data), "\n")
}

// blankShares is, per top directory of the module (agency, cli, gitcore,
// …; "." for the root package), the blank lines inside the bodies of its
// production functions, and "all" for the whole module.
func blankShares(t *testing.T) map[string]bodyLines {
	t.Helper()
	shares := map[string]bodyLines{}
	for _, g := range moduleFiles(t) {
		if g.test {
			continue
		}
		src := g.source(t)
		top, _, _ := strings.Cut(g.dir, "/")
		for _, d := range g.f.Decls {
			if fn, ok := d.(*ast.FuncDecl); ok && fn.Body != nil {
				b := funcBodyLines(g.fset, src, fn)
				s := shares[top]
				s.add(b)
				shares[top] = s
				all := shares["all"]
				all.add(b)
				shares["all"] = all
			}
		}
	}
	return shares
}

// minBlankShare is the least share of blank lines inside function bodies
// that the packages of blankFloor keep: the blank lines between a
// function's steps (go-git, git-lfs and lazygit have 10 to 12 %). A
// function that reads as one paragraph of 40 lines is hard to follow.
const minBlankShare = 0.06

// blankFloor are the directories whose functions were given their blank
// lines; the others are on their way. (errs and cmd hold short functions
// only: a function of a few lines is one step; so does host, whose few
// longer functions have their blank lines but stay under the floor.)
var blankFloor = []string{"agency", "checkpoint", "cli", "gitcore", "internal", "runner", "store", "wall", "watch"}

// TestBlankLinesBetweenSteps: the functions of blankFloor's packages part
// their steps with blank lines, minBlankShare of the body lines at least.
// With -v it prints the share per top directory:
//
//	go test ./internal/houserules -run TestBlankLinesBetweenSteps -v
func TestBlankLinesBetweenSteps(t *testing.T) {
	shares := blankShares(t)
	var dirs []string
	for d := range shares {
		dirs = append(dirs, d)
	}
	sort.Strings(dirs)
	for _, d := range dirs {
		s := shares[d]
		t.Logf("%-10s %6d body lines, %5d blank: %4.1f %%", d, s.lines, s.blank, 100*s.share())
	}

	for _, d := range blankFloor {
		if s := shares[d]; s.share() < minBlankShare {
			t.Errorf("%s: %.1f %% of the lines inside function bodies are blank (want %.0f %% at least): part a function's steps with a blank line",
				filepath.ToSlash(d), 100*s.share(), 100*minBlankShare)
		}
	}
}

// The count sees the blank lines between steps, and only those: not the
// blank lines of a multi-line string, and not the lines outside the braces.
// funcLines leaves the blank ones out of a function's length.
func TestFuncBodyLines(t *testing.T) {
	src := "package p\n" +
		"func f() string {\n" + // line 2
		"\ta := 1\n" +
		"\n" +
		"\tb := `x\n" +
		"\n" +
		"y`\n" +
		"\n" +
		"\treturn b\n" +
		"}\n" // line 10
	fset := token.NewFileSet()
	file, err := parser.ParseFile(fset, "p.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	fn := file.Decls[0].(*ast.FuncDecl)

	got := funcBodyLines(fset, strings.Split(src, "\n"), fn)
	if want := (bodyLines{lines: 5, blank: 2}); got != want {
		t.Errorf("funcBodyLines = %+v, want %+v (the string's own lines left out)", got, want)
	}
	if n := funcLines(fset, strings.Split(src, "\n"), fn); n != 7 {
		t.Errorf("funcLines = %d, want 7 (9 lines, 2 of them blank between steps)", n)
	}
}
