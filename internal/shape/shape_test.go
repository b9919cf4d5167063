package shape

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"testing"
)

// TestRepositoryShape reports every production file and function of the
// repository over a limit.
func TestRepositoryShape(t *testing.T) {
	found, err := Check("../..")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range found {
		t.Log(f)
	}
	if len(found) > 0 && os.Getenv("SHAPE_STRICT") != "" {
		t.Errorf("%d files or functions are over a limit", len(found))
	}
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
	if got := Complexity(file.Decls[0].(*ast.FuncDecl)); got != 10 {
		t.Errorf("Complexity = %d, want 10", got)
	}
}
