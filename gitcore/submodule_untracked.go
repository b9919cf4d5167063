package gitcore

import (
	"os"
	"path"
	"path/filepath"
	"strings"
)

// hasUntrackedFiles reports whether the submodule checked out at dir (git
// directory gitDir, index idx) holds a file that is neither tracked nor
// ignored, as its `git status --untracked-files=normal` would list one
// (an untracked directory counts when it holds one, or is a repository).
// Ignored are the patterns of every .gitignore on the way, of the
// submodule's info/exclude and of the user's excludes file (excludes:
// Repo.excludesFile); a pattern of one file does not undo another's. It
// runs nothing and stops at the first one found.
func hasUntrackedFiles(dir, gitDir, excludes string, idx subIndex) bool {
	w := untrackedWalk{root: dir, tracked: idx.tracked, dirs: map[string]bool{}}
	for p := range idx.tracked {
		for d := path.Dir(p); d != "."; d = path.Dir(d) {
			if w.dirs[d] {
				break
			}
			w.dirs[d] = true
		}
	}
	common := gitCommonDir(gitDir)
	var base []ignoreAt
	for _, p := range []string{filepath.Join(common, "info", "exclude"), excludes} {
		if p == "" {
			continue
		}
		if m := readIgnoreFile(p); m != nil {
			base = append(base, ignoreAt{m: m})
		}
	}
	return w.walk("", base)
}

// ignoreAt is the patterns of one ignore file, for paths below dir.
type ignoreAt struct {
	dir string
	m   *IgnoreMatcher
}

// untrackedWalk looks for an untracked file in a submodule's files.
type untrackedWalk struct {
	root    string
	tracked map[string]bool // tracked paths (files and nested submodules)
	dirs    map[string]bool // directories holding tracked paths
	seen    int
}

func (w *untrackedWalk) walk(rel string, ignores []ignoreAt) bool {
	entries, err := os.ReadDir(filepath.Join(w.root, filepath.FromSlash(rel)))
	if err != nil {
		return false
	}
	if m := readIgnoreFile(filepath.Join(w.root, filepath.FromSlash(rel), ".gitignore")); m != nil {
		ignores = append(ignores[:len(ignores):len(ignores)], ignoreAt{dir: rel, m: m})
	}
	for _, e := range entries {
		if w.seen++; w.seen > maxUntrackedWalk {
			return true
		}
		p := path.Join(rel, e.Name())
		if e.Name() == ".git" || w.tracked[p] || ignoredBy(ignores, p, e.IsDir()) {
			continue
		}
		if !e.IsDir() {
			return true
		}
		if !w.dirs[p] {
			if _, err := os.Lstat(filepath.Join(w.root, filepath.FromSlash(p), ".git")); err == nil {
				return true // a repository of its own, untracked
			}
		}
		if w.walk(p, ignores) {
			return true
		}
	}
	return false
}

// ignoredBy reports whether p (relative to the submodule's root) is
// matched by one of ignores, each relative to its directory.
func ignoredBy(ignores []ignoreAt, p string, isDir bool) bool {
	for _, ig := range ignores {
		rel := p
		if ig.dir != "" {
			r, ok := strings.CutPrefix(p, ig.dir+"/")
			if !ok {
				continue
			}
			rel = r
		}
		if ig.m.match(rel, isDir) {
			return true
		}
	}
	return false
}

// readIgnoreFile compiles the patterns of the ignore file at p (a regular
// file only); nil when there is none.
func readIgnoreFile(p string) *IgnoreMatcher {
	b, ok := readRegular(p, 1<<20)
	if !ok {
		return nil
	}
	return NewIgnoreMatcher(strings.Split(strings.ReplaceAll(string(b), "\r\n", "\n"), "\n"))
}
