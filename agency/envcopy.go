package agency

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/git-agency/git-agency/errs"
	"github.com/git-agency/git-agency/store"
)

// A virtualenv or a node_modules directory copied into a new tree (by
// .worktreeinclude) still names the tree it was made in: a venv's script
// shebangs, pyvenv.cfg's command and an editable install's .pth,
// direct_url.json or finder module; node_modules' links of file:
// dependencies. Tests in the copy then import the original checkout's
// code. outsideEnvs finds them, so worktree create, agent start and doctor
// can say what to do instead (errs.CopiedVenv, errs.LinkedNodeModules).

// maxEnvFiles bounds the files read in one venv's bin/ and site-packages:
// the check runs in every start.
const maxEnvFiles = 400

// outsideEnvs checks the given directories of tree (relative, slash
// separated, as include lists them) and, when dirs is nil, its top-level
// directories. It returns one sentence per environment that points
// outside tree.
func outsideEnvs(tree string, dirs []string) []string {
	if dirs == nil {
		ents, err := os.ReadDir(tree)
		if err != nil {
			return nil
		}

		for _, e := range ents {
			if e.IsDir() {
				dirs = append(dirs, e.Name())
			}
		}
	}

	var out []string
	for _, d := range dirs {
		d = strings.TrimSuffix(d, "/")
		abs := filepath.Join(tree, filepath.FromSlash(d))
		if fi, err := os.Lstat(abs); err != nil || !fi.IsDir() {
			continue
		}

		if _, err := os.Lstat(filepath.Join(abs, "pyvenv.cfg")); err == nil {
			if p := venvOutside(tree, abs); p != "" {
				out = append(out, errs.CopiedVenv(d, p))
			}
			continue
		}

		if filepath.Base(abs) == "node_modules" {
			if p := nodeModulesOutside(tree, abs); p != "" {
				out = append(out, errs.LinkedNodeModules(d, p))
			}
		}
	}

	return out
}

// outside reports whether the absolute path p lies outside tree.
func outside(tree, p string) bool {
	p = filepath.Clean(p)
	return p != tree && !strings.HasPrefix(p, tree+string(filepath.Separator))
}

// venvOutside is the first path outside tree that the venv at dir names
// as its own ("" if none): the venv it was made as, a script's
// interpreter in another venv, an editable install's source.
func venvOutside(tree, dir string) string {
	if p := venvCommandPath(filepath.Join(dir, "pyvenv.cfg")); p != "" && outside(tree, p) {
		return p
	}
	if p := shebangOutside(tree, filepath.Join(dir, "bin")); p != "" {
		return p
	}

	sites, _ := filepath.Glob(filepath.Join(dir, "lib", "python*", "site-packages"))
	for _, site := range sites {
		if p := editableOutside(tree, site); p != "" {
			return p
		}
	}

	return ""
}

// venvCommandPath is the venv directory pyvenv.cfg's `command` line (Python
// 3.11+: "command = /usr/bin/python3 -m venv /abs/.venv") made it as.
func venvCommandPath(cfg string) string {
	f, err := os.Open(cfg)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), "=")
		if !ok || strings.TrimSpace(k) != "command" {
			continue
		}

		f := strings.Fields(v)
		if len(f) > 0 && filepath.IsAbs(f[len(f)-1]) {
			return f[len(f)-1]
		}
	}

	return ""
}

// shebangOutside is the interpreter of a script in bin that lies in
// another virtualenv outside tree (its directory's parent has a
// pyvenv.cfg): the script was made for that venv.
func shebangOutside(tree, bin string) string {
	ents, err := os.ReadDir(bin)
	if err != nil {
		return ""
	}

	for i, e := range ents {
		if i >= maxEnvFiles {
			break
		}
		if !e.Type().IsRegular() {
			continue
		}

		interp := shebang(filepath.Join(bin, e.Name()))
		if interp == "" || !filepath.IsAbs(interp) || !outside(tree, interp) {
			continue
		}

		venv := filepath.Dir(filepath.Dir(interp))
		if _, err := os.Stat(filepath.Join(venv, "pyvenv.cfg")); err == nil {
			return venv
		}
	}

	return ""
}

// shebang is a file's interpreter path from its #! line ("" for none).
func shebang(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	buf := make([]byte, 256)
	n, _ := f.Read(buf)
	line, _, _ := strings.Cut(string(buf[:n]), "\n")
	if !strings.HasPrefix(line, "#!") {
		return ""
	}

	fields := strings.Fields(strings.TrimPrefix(line, "#!"))
	if len(fields) == 0 {
		return ""
	}

	return fields[0]
}

// finderPath is a quoted absolute path in a setuptools editable finder
// module (MAPPING = {'pkg': '/abs/src/pkg'}).
var finderPath = regexp.MustCompile(`['"](/[^'"\n]+)['"]`)

// editableOutside is the first source directory outside tree that an
// editable install in site names: a .pth line, a finder module's mapping,
// a dist-info's direct_url.json.
func editableOutside(tree, site string) string {
	ents, err := os.ReadDir(site)
	if err != nil {
		return ""
	}

	for i, e := range ents {
		if i >= maxEnvFiles {
			break
		}

		name, path := e.Name(), filepath.Join(site, e.Name())
		var cands []string
		switch {
		case strings.HasSuffix(name, ".pth") || strings.HasSuffix(name, ".egg-link"):
			cands = pthPaths(path)
		case strings.HasPrefix(name, "__editable__") && strings.HasSuffix(name, "_finder.py"):
			if b, err := os.ReadFile(path); err == nil {
				for _, m := range finderPath.FindAllStringSubmatch(string(b), -1) {
					cands = append(cands, m[1])
				}
			}
		case strings.HasSuffix(name, ".dist-info"):
			cands = directURLPath(filepath.Join(path, "direct_url.json"))
		}

		for _, c := range cands {
			if outside(tree, c) {
				return c
			}
		}
	}

	return ""
}

// pthPaths are the absolute directory lines of a .pth (or .egg-link)
// file; import lines and relative entries are left out.
func pthPaths(path string) []string {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}

	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		l = strings.TrimSpace(l)
		if filepath.IsAbs(l) {
			out = append(out, l)
		}
	}

	return out
}

// directURLPath is the local directory of an editable install's
// direct_url.json ({"url": "file:///abs", "dir_info": {"editable": true}}).
func directURLPath(path string) []string {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}

	var d struct {
		URL     string `json:"url"`
		DirInfo struct {
			Editable bool `json:"editable"`
		} `json:"dir_info"`
	}
	if json.Unmarshal(b, &d) != nil || !d.DirInfo.Editable || !strings.HasPrefix(d.URL, "file://") {
		return nil
	}

	return []string{strings.TrimPrefix(d.URL, "file://")}
}

// nodeModulesOutside is the first target outside tree of a package link
// in node_modules (name or @scope/name): a file: dependency or npm link.
func nodeModulesOutside(tree, dir string) string {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return ""
	}

	for _, e := range ents {
		p := filepath.Join(dir, e.Name())
		if strings.HasPrefix(e.Name(), "@") && e.IsDir() {
			if t := nodeModulesOutside(tree, p); t != "" {
				return t
			}
			continue
		}

		if e.Type()&os.ModeSymlink == 0 {
			continue
		}

		t, err := os.Readlink(p)
		if err != nil {
			continue
		}

		if !filepath.IsAbs(t) {
			t = filepath.Join(dir, t)
		}

		if outside(tree, t) {
			return filepath.Clean(t)
		}
	}

	return ""
}

// checkCopiedEnvs is doctor's look at the trees of integration worktrees
// and of sandboxes still there: a copied environment that points outside
// its tree is a warning, with what to do.
func (a *App) checkCopiedEnvs(add addFinding, wts []store.WorktreeEntry, records map[string]*store.InvocationRecord) {
	var trees []string
	for _, e := range wts {
		if e.Record != nil && e.Record.State == store.StatePresent {
			trees = append(trees, e.Record.TreePath)
		}
	}

	ids := make([]string, 0, len(records))
	for id := range records {
		ids = append(ids, id)
	}

	sort.Strings(ids)
	for _, id := range ids {
		if r := records[id]; r == nil {
			continue
		}
		if t := a.sandboxTree(records[id]); t != "" {
			trees = append(trees, t)
		}
	}

	for _, tree := range trees {
		for _, o := range outsideEnvs(tree, nil) {
			add("environments", LevelWarn, "", tree, "%s", o)
		}
	}
}
