package houserules

import (
	"sort"
	"strconv"
	"strings"
	"testing"
)

// modulePath is the import path of the module's root.
const modulePath = "github.com/git-agency/git-agency"

// importGraph is what each package (module-relative directory) of
// production code imports of the module's own packages.
type importGraph map[string]map[string]bool

// productionImports is the module's import graph, test files left out.
func productionImports(t *testing.T) importGraph {
	t.Helper()
	g := importGraph{}
	for _, f := range moduleFiles(t) {
		if f.test {
			continue
		}
		if g[f.dir] == nil {
			g[f.dir] = map[string]bool{}
		}
		for _, im := range f.f.Imports {
			p, _ := strconv.Unquote(im.Path.Value)
			if rel, ok := strings.CutPrefix(p, modulePath+"/"); ok {
				g[f.dir][rel] = true
			}
		}
	}
	return g
}

// under reports whether package dir is root or lies below it.
func under(dir, root string) bool { return dir == root || strings.HasPrefix(dir, root+"/") }

// reaches reports whether from imports target, directly or through other
// packages, and names the path.
func (g importGraph) reaches(from, target string) (string, bool) {
	seen := map[string]bool{}
	var walk func(p, path string) (string, bool)
	walk = func(p, path string) (string, bool) {
		if seen[p] {
			return "", false
		}
		seen[p] = true
		for im := range g[p] {
			if under(im, target) {
				return path + " → " + im, true
			}
			if found, ok := walk(im, path+" → "+im); ok {
				return found, true
			}
		}
		return "", false
	}
	return walk(from, from)
}

// leaf reports whether package p imports none of the module's packages.
func (g importGraph) leaf(p string) bool { return len(g[p]) == 0 }

// importRules are the directions docs/architecture.md draws:
//   - store and gitcore import only leaves (errs, internal/subproc,
//     internal/filestamp: packages that import nothing of ours), or their
//     own subpackages, which keep the same rule;
//   - runner, wall and checkpoint never reach agency, even through another
//     package;
//   - cli and watch never import runner, wall or checkpoint themselves:
//     they reach supervision through agency, and the hidden entry points
//     through internal/entry, which the programs register;
//   - agency's own packages (agency/land, agency/view, agency/tidy,
//   - agency's own packages (agency/land, agency/view, agency/tidy,
//     agency/undo, agency/remote, agency/internal/core) sit below agency
//     and never import it; cli and watch reach them only through
//     agency.App.
//
// It returns one sentence per broken rule, sorted.
func importRules(g importGraph) []string {
	var out []string
	for p, imports := range g {
		for im := range imports {
			switch {
			case (under(p, "store") || under(p, "gitcore")) && !g.leaf(im) && !under(im, strings.SplitN(p, "/", 2)[0]):
				out = append(out, p+" imports "+im+", which is not a leaf (store and gitcore import only leaves)")
			case (under(p, "cli") || under(p, "watch")) && (under(im, "runner") || under(im, "wall") || under(im, "checkpoint")):
				out = append(out, p+" imports "+im+" (cli and watch reach it only through agency or internal/entry)")
			case (under(p, "cli") || under(p, "watch")) && strings.HasPrefix(im, "agency/"):
				out = append(out, p+" imports "+im+" (cli and watch reach agency's packages only through agency.App)")
			case strings.HasPrefix(p, "agency/") && im == "agency":
				out = append(out, p+" imports agency (agency's own packages sit below it)")
			}
		}
		if under(p, "runner") || under(p, "wall") || under(p, "checkpoint") {
			if path, ok := g.reaches(p, "agency"); ok {
				out = append(out, p+" reaches agency ("+path+"): runner, wall and checkpoint never import agency")
			}
		}
	}
	sort.Strings(out)
	return out
}

// Imports point down only, as docs/architecture.md draws them.
func TestImportDirection(t *testing.T) {
	g := productionImports(t)
	for _, p := range []string{"store", "gitcore", "runner", "wall", "checkpoint", "cli", "watch", "agency", "agency/land", "agency/view", "agency/tidy", "agency/undo", "agency/remote", "internal/entry"} {
		if g[p] == nil {
			t.Fatalf("no package %s in the import graph: the walk or the rules are out of date", p)
		}
	}
	for _, broken := range importRules(g) {
		t.Error(broken)
	}
}

// The rules see a broken direction: the module's own graph with one import
// added that the architecture forbids fails, and names it.
func TestImportDirectionCatches(t *testing.T) {
	real := productionImports(t)
	if broken := importRules(real); len(broken) > 0 {
		t.Fatalf("the module already breaks the rules: %v", broken)
	}
	for _, tt := range []struct{ from, to, want string }{
		{"store", "runner", "store imports runner"},
		{"gitcore", "store", "gitcore imports store"},
		{"wall", "agency", "wall reaches agency"},
		{"checkpoint", "agency", "checkpoint reaches agency"},
		{"gitcore", "agency", "runner reaches agency (runner →"},
		{"cli", "runner", "cli imports runner"},
		{"watch", "wall", "watch imports wall"},
		{"agency/land", "agency", "agency/land imports agency"},
		{"cli", "agency/land", "cli imports agency/land"},
		{"agency/view", "agency", "agency/view imports agency"},
		{"watch", "agency/view", "watch imports agency/view"},
		{"agency/tidy", "agency", "agency/tidy imports agency"},
		{"cli", "agency/tidy", "cli imports agency/tidy"},
		{"agency/undo", "agency", "agency/undo imports agency"},
		{"watch", "agency/undo", "watch imports agency/undo"},
		{"agency/remote", "agency", "agency/remote imports agency"},
		{"cli", "agency/remote", "cli imports agency/remote"},
		{"watch", "agency/remote", "watch imports agency/remote"},
	} {
		t.Run(tt.from+"→"+tt.to, func(t *testing.T) {
			g := importGraph{}
			for p, imports := range real {
				g[p] = map[string]bool{}
				for im := range imports {
					g[p][im] = true
				}
			}
			g[tt.from][tt.to] = true
			broken := strings.Join(importRules(g), "\n")
			if !strings.Contains(broken, tt.want) {
				t.Errorf("%s importing %s: the rules said\n%s\nwant a line with %q", tt.from, tt.to, broken, tt.want)
			}
		})
	}
}
