package agency

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Each sign of a copied environment alone is enough; the same made inside
// the tree is not one.
func TestOutsideEnvs(t *testing.T) {
	base := t.TempDir()
	orig := filepath.Join(base, "orig")
	if err := os.MkdirAll(filepath.Join(orig, ".venv"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(orig, ".venv", "pyvenv.cfg"), []byte("home = /usr/bin\n"), 0o644)
	site := ".venv/lib/python3.12/site-packages/"
	cases := []struct {
		name  string
		files map[string]string // relative path (in the tree; {T} the tree, {O} orig) -> content; "->X" a symlink
		want  string            // "" none; else a substring of the sentence
	}{
		{"pyvenv command", map[string]string{".venv/pyvenv.cfg": "home = /usr/bin\ncommand = /usr/bin/python3 -m venv {O}/.venv\n"}, "({O}/.venv)"},
		{"shebang", map[string]string{".venv/pyvenv.cfg": "home = /usr/bin\n", ".venv/bin/pytest": "#!{O}/.venv/bin/python\n"}, "({O}/.venv)"},
		{"system shebang", map[string]string{".venv/pyvenv.cfg": "home = /usr/bin\n", ".venv/bin/tool": "#!/usr/bin/env python3\n"}, ""},
		{"pth", map[string]string{".venv/pyvenv.cfg": "x\n", site + "easy-install.pth": "{O}/src\n"}, "({O}/src)"},
		{"finder", map[string]string{".venv/pyvenv.cfg": "x\n", site + "__editable___calc_0_1_finder.py": "MAPPING = {'calc': '{O}/src/calc'}\n"}, "({O}/src/calc)"},
		{"direct_url", map[string]string{".venv/pyvenv.cfg": "x\n", site + "calc-0.1.dist-info/direct_url.json": `{"url": "file://{O}", "dir_info": {"editable": true}}`}, "({O})"},
		{"not editable", map[string]string{".venv/pyvenv.cfg": "x\n", site + "calc-0.1.dist-info/direct_url.json": `{"url": "file://{O}/calc.tar.gz", "archive_info": {}}`}, ""},
		{"made here", map[string]string{".venv/pyvenv.cfg": "command = /usr/bin/python3 -m venv {T}/.venv\n", ".venv/bin/pytest": "#!{T}/.venv/bin/python\n", site + "x.pth": "{T}/src\n"}, ""},
		{"file: link", map[string]string{"node_modules/lib": "->{O}/lib"}, "node_modules: a package in it links outside this tree ({O}/lib)"},
		{"relative link out", map[string]string{"node_modules/@s/lib": "->../../../lib"}, "links outside this tree ({B}/lib)"},
		{"links inside", map[string]string{"node_modules/.bin/x": "->../x/bin.js", "node_modules/lib": "->../packages/lib"}, ""},
	}
	for i, c := range cases {
		tree := filepath.Join(base, "t"+string(rune('a'+i)))
		sub := func(s string) string {
			return strings.NewReplacer("{T}", tree, "{O}", orig, "{B}", base).Replace(s)
		}
		for rel, content := range c.files {
			p := filepath.Join(tree, rel)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			var err error
			if target, ok := strings.CutPrefix(content, "->"); ok {
				err = os.Symlink(sub(target), p)
			} else {
				err = os.WriteFile(p, []byte(sub(content)), 0o644)
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		got := strings.Join(outsideEnvs(tree, nil), "\n")
		if c.want == "" && got != "" || c.want != "" && !strings.Contains(got, sub(c.want)) {
			t.Errorf("%s: got %q, want %q", c.name, got, sub(c.want))
		}
	}
}
