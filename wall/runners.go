package wall

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// A runner is more than its program: an npm install's bin entry is a link
// to a script in its package, which loads the rest of the package and its
// dependencies (codex its platform binary, from a sibling package); a
// Python tool's script runs its virtualenv's interpreter and packages.
// Inside /tmp (private inside the wall) all of that must be shown again,
// not only the program's directory.

// runnerRoots are the read-only roots that keep the installation of the
// program named by argv0 whole inside the wall: the directory of the path
// as given and of the path it resolves to, and the package root of each
// (the outermost node_modules, a virtualenv, or the prefix of a bin
// directory), and the same for a script's interpreter.
func runnerRoots(argv0 string) []string {
	p, err := exec.LookPath(argv0)
	if err != nil {
		return nil
	}

	abs, err := filepath.Abs(p)
	if err != nil {
		return nil
	}

	var out []string
	for _, path := range []string{abs, realPath(abs)} {
		out = append(out, filepath.Dir(path))
		if root := packageRoot(path); root != "" {
			out = append(out, root)
		}
	}

	if interp := interpreter(realPath(abs)); interp != "" && interp != abs {
		out = append(out, filepath.Dir(interp), filepath.Dir(realPath(interp)))
		if root := packageRoot(interp); root != "" {
			out = append(out, root)
		}
	}

	return out
}

// packageRoot is the root of the installation path lies in: the parent of
// its outermost node_modules (an npm prefix's lib/ or a project), the
// directory holding a pyvenv.cfg, or the prefix of a bin/ directory that
// has a lib/ beside it. "" when none, and never / or a private directory
// itself (all of /tmp would show every other program's files).
func packageRoot(path string) string {
	root := ""
	dir := filepath.Dir(path)
	for d := dir; d != filepath.Dir(d); d = filepath.Dir(d) {
		if filepath.Base(d) == "node_modules" {
			root = filepath.Dir(d)
		}
	}

	if root == "" {
		for d := dir; d != filepath.Dir(d) && root == ""; d = filepath.Dir(d) {
			if _, err := os.Stat(filepath.Join(d, "pyvenv.cfg")); err == nil {
				root = d
			}
		}
	}
	if root == "" && filepath.Base(dir) == "bin" {
		if fi, err := os.Stat(filepath.Join(filepath.Dir(dir), "lib")); err == nil && fi.IsDir() {
			root = filepath.Dir(dir)
		}
	}
	if root == "" || root == filepath.Dir(root) || contains(privateDirs, root) {
		return ""
	}

	return root
}

// interpreter is the program a script's #! line names ("" for none, and
// for /usr/bin/env, which finds its program on PATH, visible anyway).
func interpreter(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	line, _ := bufio.NewReader(f).ReadString('\n')
	rest, ok := strings.CutPrefix(line, "#!")
	if !ok {
		return ""
	}

	fields := strings.Fields(rest)
	if len(fields) == 0 || !filepath.IsAbs(fields[0]) || filepath.Base(fields[0]) == "env" {
		return ""
	}

	return fields[0]
}
