package houserules

import (
	"go/ast"
	"sort"
	"testing"
)

// Every package with tests runs them hermetically: its TestMain calls
// testenv.Main (the root package's through testscript.Main), which gives the tests a HOME, XDG directories and a git
// configuration of their own. A package without one would read the
// developer's ~/.gitconfig (signing, colours, a pager) and pass or fail by
// machine.
func TestEveryTestPackageIsHermetic(t *testing.T) {
	tested := map[string]bool{}
	hermetic := map[string]bool{}
	for _, g := range moduleFiles(t) {
		if !g.test {
			continue
		}
		tested[g.dir] = true
		for _, d := range g.f.Decls {
			if fn, ok := d.(*ast.FuncDecl); ok && fn.Body != nil && callsTestenvMain(fn, g.dir == "internal/testenv") {
				hermetic[g.dir] = true
			}
		}
	}
	var missing []string
	for dir := range tested {
		if !hermetic[dir] {
			missing = append(missing, dir)
		}
	}
	sort.Strings(missing)
	for _, dir := range missing {
		t.Errorf("%s: its tests have no TestMain calling testenv.Main (os.Exit(testenv.Main(m))): they would read the developer's git configuration", dir)
	}
}

// callsTestenvMain reports whether fn calls testenv.Main (Main, inside
// testenv itself).
func callsTestenvMain(fn *ast.FuncDecl, inTestenv bool) bool {
	found := false
	ast.Inspect(fn.Body, func(n ast.Node) bool {
		if call, ok := n.(*ast.CallExpr); ok && inTestenv {
			if id, ok := call.Fun.(*ast.Ident); ok && id.Name == "Main" {
				found = true
			}
		}
		if sel, ok := n.(*ast.SelectorExpr); ok {
			if id, ok := sel.X.(*ast.Ident); ok && id.Name == "testenv" && sel.Sel.Name == "Main" {
				found = true
			}
		}
		return !found
	})
	return found
}
