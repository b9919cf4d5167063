package errs

import (
	"go/ast"
	"go/parser"
	"go/token"
	"testing"
)

// Every code declared in errs.go has a meaning (the man page lists them).
func TestEveryCodeHasAMeaning(t *testing.T) {
	for name, code := range declaredCodes(t) {
		if Meaning[code] == "" {
			t.Errorf("%s (%s) has no entry in Meaning (errs/codes.go)", name, code)
		}
	}
}

// declaredCodes are the codes errs.go declares, by constant name.
func declaredCodes(t *testing.T) map[string]Code {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "errs.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	codes := map[string]Code{}
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
			codes[name.Name] = Code(lit.Value[1 : len(lit.Value)-1])
		}
		return true
	})
	if len(codes) < 10 {
		t.Fatalf("found only %d codes in errs.go", len(codes))
	}
	return codes
}
