package houserules

import (
	"bufio"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// The sizes a reader can hold. The line limit is the one that keeps a
// function readable; the complexity limit only catches the outliers (30,
// gocyclo's usual threshold): set lower, it had functions diced into
// fragments of 14 and 15 to pass, where one clear 40-line function with
// blank lines between its steps reads better.
const (
	maxFileLines  = 600
	maxFuncLines  = 60
	maxComplexity = 30
)

// knownFile lists the functions that were over a limit when this check came
// in. It only shrinks: break a function into named steps, then take it off.
const knownFile = "known_big_functions.txt"

// No production file over maxFileLines lines; no function over
// maxFuncLines lines (the blank lines between its steps not counted: they
// make it easier to read, not harder) or cyclomatic complexity
// maxComplexity that
// known_big_functions.txt does not list; and that list is a ratchet (see
// checkKnown).
func TestSizes(t *testing.T) {
	known := readKnown(t, knownFile)
	seen := map[string]bool{}
	for _, g := range moduleFiles(t) {
		if g.test {
			continue
		}
		path := filepath.ToSlash(filepath.Join(g.dir, g.name))
		if n := g.fset.File(g.f.Pos()).LineCount(); n > maxFileLines {
			t.Errorf("%s: %d lines (limit %d): split it where a reader looks for its parts", path, n, maxFileLines)
		}
		src := g.source(t)
		for _, d := range g.f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			lines := funcLines(g.fset, src, fn)
			c := complexity(fn)
			if lines <= maxFuncLines && c <= maxComplexity {
				continue
			}
			k := path + " " + funcName(fn)
			if known.entries[k] {
				seen[k] = true
				continue
			}
			t.Errorf("%s: %s: %d lines, complexity %d (limits %d, %d): break it into named steps",
				g.pos(fn), funcName(fn), lines, c, maxFuncLines, maxComplexity)
		}
	}
	for _, problem := range checkKnown(known, seen) {
		t.Error(problem)
	}
}

// funcLines is the length of fn in lines, the blank lines inside its body
// not counted.
func funcLines(fset *token.FileSet, src []string, fn *ast.FuncDecl) int {
	return fset.Position(fn.End()).Line - fset.Position(fn.Pos()).Line + 1 - funcBodyLines(fset, src, fn).blank
}

// knownList is known_big_functions.txt: its "path Receiver.Func" entries,
// and the ceiling its "# ceiling: N" line records.
type knownList struct {
	entries map[string]bool
	dups    []string
	ceiling int // -1: no ceiling line
}

// checkKnown keeps known_big_functions.txt a ratchet. An entry that is gone
// or within the limits now (not in seen) fails: take it off. The ceiling
// must equal the number of entries: a line added for a new big function
// makes the list longer than the ceiling and fails, and taking one off
// means lowering the ceiling with it, so the list only shrinks.
func checkKnown(known knownList, seen map[string]bool) []string {
	var problems []string
	var stale []string
	for k := range known.entries {
		if !seen[k] {
			stale = append(stale, k)
		}
	}
	sort.Strings(stale)
	for _, k := range stale {
		problems = append(problems, fmt.Sprintf("%s lists %q, which is within the limits now (or gone): take it off and lower the ceiling", knownFile, k))
	}
	for _, k := range known.dups {
		problems = append(problems, fmt.Sprintf("%s lists %q twice", knownFile, k))
	}
	n := len(known.entries)
	switch {
	case known.ceiling < 0:
		problems = append(problems, fmt.Sprintf("%s has no \"# ceiling: N\" line", knownFile))
	case n > known.ceiling:
		problems = append(problems, fmt.Sprintf("%s lists %d functions, over its ceiling of %d: a line was added; break the new function into named steps instead", knownFile, n, known.ceiling))
	case n < known.ceiling:
		problems = append(problems, fmt.Sprintf("%s lists %d functions under a ceiling of %d: lower the ceiling to %d, so the list only shrinks", knownFile, n, known.ceiling, n))
	}
	return problems
}

// readKnown reads a known list: "path Receiver.Func" lines, # comments, and
// one "# ceiling: N" line.
func readKnown(t *testing.T, name string) knownList {
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	known, err := parseKnown(string(b))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return known
}

func parseKnown(text string) (knownList, error) {
	known := knownList{entries: map[string]bool{}, ceiling: -1}
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if c, ok := strings.CutPrefix(line, "# ceiling:"); ok {
			n, err := strconv.Atoi(strings.TrimSpace(c))
			if err != nil {
				return known, fmt.Errorf("bad ceiling line %q", line)
			}
			known.ceiling = n
			continue
		}
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if known.entries[line] {
			known.dups = append(known.dups, line)
		}
		known.entries[line] = true
	}
	return known, sc.Err()
}

// complexity is a function's cyclomatic complexity, counted as gocyclo
// does: 1, plus one per if, for, range, non-default case or select clause,
// && and ||. Function literals inside count towards it.
func complexity(fn *ast.FuncDecl) int {
	c := 1
	ast.Inspect(fn.Body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.IfStmt, *ast.ForStmt, *ast.RangeStmt:
			c++
		case *ast.CaseClause:
			if n.List != nil {
				c++
			}
		case *ast.CommClause:
			if n.Comm != nil {
				c++
			}
		case *ast.BinaryExpr:
			if n.Op == token.LAND || n.Op == token.LOR {
				c++
			}
		}
		return true
	})
	return c
}

// funcName is "Func" or "Receiver.Func".
func funcName(fn *ast.FuncDecl) string {
	if fn.Recv == nil || len(fn.Recv.List) == 0 {
		return fn.Name.Name
	}
	t := fn.Recv.List[0].Type
	if s, ok := t.(*ast.StarExpr); ok {
		t = s.X
	}
	if g, ok := t.(*ast.IndexExpr); ok {
		t = g.X
	}
	if id, ok := t.(*ast.Ident); ok {
		return id.Name + "." + fn.Name.Name
	}
	return fn.Name.Name
}

func TestComplexity(t *testing.T) {
	src := `package p
func f(a, b bool, xs []int, ch chan int) {
	if a && b || a {
	}
	for range xs {
	}
	for i := 0; i < 1; i++ {
	}
	switch {
	case a:
	case b:
	default:
	}
	select {
	case <-ch:
	default:
	}
	_ = func() { if a {} }
}`
	file, err := parser.ParseFile(token.NewFileSet(), "p.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	// 1 + if + && + || + range + for + 2 cases + 1 comm + the literal's if
	if got := complexity(file.Decls[0].(*ast.FuncDecl)); got != 10 {
		t.Errorf("complexity = %d, want 10", got)
	}
}

// TestListKnown prints known_big_functions.txt as it should be now (run
// with -v and KNOWN=1 to regenerate it when taking entries off).
func TestListKnown(t *testing.T) {
	if os.Getenv("KNOWN") == "" {
		t.Skip("set KNOWN=1")
	}
	for _, g := range moduleFiles(t) {
		if g.test {
			continue
		}
		src := g.source(t)
		for _, d := range g.f.Decls {
			if fn, ok := d.(*ast.FuncDecl); ok && fn.Body != nil {
				lines := funcLines(g.fset, src, fn)
				if lines > maxFuncLines || complexity(fn) > maxComplexity {
					fmt.Println(filepath.ToSlash(filepath.Join(g.dir, g.name)) + " " + funcName(fn))
				}
			}
		}
	}
}
