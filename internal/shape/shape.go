// Package shape measures the repository's Go sources against the sizes a
// reader can hold: no production file over MaxFileLines lines, no function
// over MaxFuncLines lines or cyclomatic complexity MaxComplexity. Its test
// (run by `make lint` and `make test`) fails when one is.
package shape

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// The limits.
const (
	MaxFileLines  = 600
	MaxFuncLines  = 60
	MaxComplexity = 15
)

// Finding is one file or function over a limit.
type Finding struct {
	Path  string // slash-separated, relative to the root
	Func  string // "" for a file
	Lines int
	// Complexity is the function's cyclomatic complexity (0 for a file).
	Complexity int
}

func (f Finding) String() string {
	if f.Func == "" {
		return fmt.Sprintf("%s: %d lines (limit %d)", f.Path, f.Lines, MaxFileLines)
	}
	return fmt.Sprintf("%s: %s: %d lines, complexity %d (limits %d, %d)", f.Path, f.Func, f.Lines, f.Complexity, MaxFuncLines, MaxComplexity)
}

// Check walks the production (non-test) Go files under root, skipping
// testdata and hidden directories, and returns what is over a limit.
func Check(root string) ([]Finding, error) {
	var out []Finding
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != root && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		found, err := checkFile(fset, path, filepath.ToSlash(rel))
		out = append(out, found...)
		return err
	})
	sort.Slice(out, func(i, j int) bool {
		if out[i].Path != out[j].Path {
			return out[i].Path < out[j].Path
		}
		return out[i].Func < out[j].Func
	})
	return out, err
}

// checkFile measures one file and its functions.
func checkFile(fset *token.FileSet, path, rel string) ([]Finding, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []Finding
	if n := strings.Count(string(src), "\n"); n > MaxFileLines {
		out = append(out, Finding{Path: rel, Lines: n})
	}
	file, err := parser.ParseFile(fset, path, src, 0)
	if err != nil {
		return out, err
	}
	for _, decl := range file.Decls {
		fn, ok := decl.(*ast.FuncDecl)
		if !ok || fn.Body == nil {
			continue
		}
		lines := fset.Position(fn.End()).Line - fset.Position(fn.Pos()).Line + 1
		if c := Complexity(fn); lines > MaxFuncLines || c > MaxComplexity {
			out = append(out, Finding{Path: rel, Func: funcName(fn), Lines: lines, Complexity: c})
		}
	}
	return out, nil
}

// Complexity is the cyclomatic complexity of a function, counted as
// gocyclo does: 1, plus one per if, for, range, non-default case or
// select clause, && and ||. Function literals inside count towards it.
func Complexity(fn *ast.FuncDecl) int {
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
