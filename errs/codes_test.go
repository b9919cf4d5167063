package errs

import (
	"go/ast"
	"go/parser"
	"go/token"
	"testing"
)

// Every code declared in errs.go has a meaning (the man page lists them).
func TestEveryCodeHasAMeaning(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "errs.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	ast.Inspect(f, func(node ast.Node) bool {
		vs, ok := node.(*ast.ValueSpec)
		if !ok {
			return true
		}
		if id, ok := vs.Type.(*ast.Ident); !ok || id.Name != "Code" {
			return true
		}
		for i, name := range vs.Names {
			lit, ok := vs.Values[i].(*ast.BasicLit)
			if !ok {
				continue
			}
			n++
			code := Code(lit.Value[1 : len(lit.Value)-1])
			if Meaning[code] == "" {
				t.Errorf("%s (%s) has no entry in Meaning (errs/codes.go)", name.Name, code)
			}
		}
		return true
	})
	if n < 10 {
		t.Fatalf("found only %d codes in errs.go", n)
	}
}
