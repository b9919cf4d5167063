package houserules

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// execAllowed are the directories (module-relative) whose non-test code may
// import os/exec: the subprocess paths, and the helper programs the tests
// and benchmarks build (they are not git-agency).
var execAllowed = append(append([]string(nil), execDoors...), execHelpers...)

// execDoors are the subprocess paths of git-agency itself; execHelpers the
// helper programs.
var (
	execDoors   = []string{"gitcore", "runner", "runner/tmux", "wall", "internal/subproc"}
	execHelpers = []string{"internal/fakeagent", "internal/demoagent", "internal/testrepo", "internal/testenv", "bench/", "internal/sshdtest"}
)

// sshHome is the one package that runs ssh (and may import os/exec for it).
const sshHome = "host"

// noPrint are the packages that never print (only cli and watch do).
var noPrint = []string{"agency", "store", "gitcore", "runner", "runner/tmux", "runner/stream", "wall", "checkpoint", "errs"}

type goFile struct {
	dir  string // module-relative, slash-separated
	name string
	test bool
	f    *ast.File
	fset *token.FileSet
}

func moduleFiles(t *testing.T) []goFile {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	var out []goFile
	fset := token.NewFileSet()
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if p != root && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata" || name == "build") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, filepath.Dir(p))
		out = append(out, goFile{dir: filepath.ToSlash(rel), name: name, test: strings.HasSuffix(name, "_test.go"), f: f, fset: fset})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) < 50 {
		t.Fatalf("found only %d Go files under %s: the walk is wrong", len(out), root)
	}
	return out
}

func allowed(dir string, list []string) bool {
	for _, a := range list {
		if dir == a || strings.HasSuffix(a, "/") && strings.HasPrefix(dir+"/", a) {
			return true
		}
	}
	return false
}

func (g goFile) pos(n ast.Node) string {
	p := g.fset.Position(n.Pos())
	return filepath.ToSlash(filepath.Join(g.dir, g.name)) + ":" + strconv.Itoa(p.Line)
}

// No init() wiring anywhere, tests included: what depends on what is in
// the import graph and the calls.
func TestNoInit(t *testing.T) {
	for _, g := range moduleFiles(t) {
		for _, d := range g.f.Decls {
			if fn, ok := d.(*ast.FuncDecl); ok && fn.Recv == nil && fn.Name.Name == "init" {
				t.Errorf("%s: func init() (call it from main or TestMain, or make the seam a field)", g.pos(fn))
			}
		}
	}
}

// No package-level function variables in production code: a seam a test
// needs is a struct field.
func TestNoPackageFuncVars(t *testing.T) {
	for _, g := range moduleFiles(t) {
		if g.test {
			continue
		}
		for _, d := range g.f.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok || gd.Tok != token.VAR {
				continue
			}
			for _, s := range gd.Specs {
				vs := s.(*ast.ValueSpec)
				if _, ok := vs.Type.(*ast.FuncType); ok {
					t.Errorf("%s: package-level variable %s of function type", g.pos(vs), vs.Names[0].Name)
				}
				for i, v := range vs.Values {
					if _, ok := v.(*ast.FuncLit); ok {
						t.Errorf("%s: package-level variable %s holds a function", g.pos(vs), vs.Names[i].Name)
					}
				}
			}
		}
	}
}

// Subprocesses start only in gitcore (git), runner/tmux (tmux), runner
// (agents, hooks, notify), wall (bubblewrap's probe) and internal/subproc (the shared environment and
// trace, and the terminal programs cli and watch hand the terminal to).
func TestSubprocessPaths(t *testing.T) {
	for _, g := range moduleFiles(t) {
		if g.test || allowed(g.dir, execAllowed) || g.dir == sshHome {
			continue
		}
		for _, im := range g.f.Imports {
			if p, _ := strconv.Unquote(im.Path.Value); p == "os/exec" {
				t.Errorf("%s: imports os/exec outside gitcore, runner, runner/tmux, wall and internal/subproc", g.pos(im))
			}
		}
	}
	for _, g := range moduleFiles(t) {
		if g.dir == "internal/subproc" || allowed(g.dir, execHelpers) {
			continue
		}
		ast.Inspect(g.f, func(n ast.Node) bool {
			if sel, ok := n.(*ast.SelectorExpr); ok && sel.Sel.Name == "Exec" {
				if id, ok := sel.X.(*ast.Ident); ok && (id.Name == "syscall" || id.Name == "unix") {
					t.Errorf("%s: %s.Exec outside internal/subproc (use subproc.Terminal.Exec)", g.pos(sel), id.Name)
				}
			}
			return true
		})
	}
}

// Only cli and watch print; the packages below them return results.
func TestOnlyFrontEndsPrint(t *testing.T) {
	for _, g := range moduleFiles(t) {
		if g.test || !allowed(g.dir, noPrint) {
			continue
		}
		ast.Inspect(g.f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			id, ok := sel.X.(*ast.Ident)
			if !ok {
				return true
			}
			switch {
			case id.Name == "fmt" && strings.HasPrefix(sel.Sel.Name, "Print"),
				id.Name == "os" && (sel.Sel.Name == "Stdout" || sel.Sel.Name == "Stderr"),
				id.Name == "log" && (strings.HasPrefix(sel.Sel.Name, "Print") || strings.HasPrefix(sel.Sel.Name, "Fatal")):
				t.Errorf("%s: %s.%s in a package that never prints", g.pos(sel), id.Name, sel.Sel.Name)
			}
			return true
		})
	}
}

// git runs only in gitcore, tmux only in runner/tmux: no exec.Command,
// CommandContext or LookPath of "git" or "tmux" (or a path ending in it)
// anywhere else.
func TestGitAndTmuxHaveOneHome(t *testing.T) {
	home := map[string]string{"git": "gitcore", "tmux": "runner/tmux", "ssh": sshHome}
	for _, g := range moduleFiles(t) {
		if g.test || allowed(g.dir, execHelpers) {
			continue
		}
		ast.Inspect(g.f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || len(call.Args) == 0 {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if id, ok := sel.X.(*ast.Ident); !ok || id.Name != "exec" {
				return true
			}
			arg := call.Args[0]
			if sel.Sel.Name == "CommandContext" && len(call.Args) > 1 {
				arg = call.Args[1]
			}
			lit, ok := arg.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			prog, _ := strconv.Unquote(lit.Value)
			prog = prog[strings.LastIndex(prog, "/")+1:]
			if want, ok := home[prog]; ok && g.dir != want {
				t.Errorf("%s: exec.%s(%q) outside %s", g.pos(call), sel.Sel.Name, prog, want)
			}
			return true
		})
	}
}
