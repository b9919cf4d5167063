package gitcore

import (
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
)

// HeadFromFiles is the commit the tree's HEAD names, read from files as
// git reads them (see headCommit), without running git: "" when it cannot
// tell that way (ask Head). A read that looks at many trees (gc) spares a
// `git rev-parse` per tree.
func (t *Tree) HeadFromFiles() string {
	gitDir, ok := worktreeGitDir(t.Path)
	if !ok {
		return ""
	}
	return t.headCommit(gitDir)
}

// worktreeGitDir is the git directory of the worktree at tree: the one
// its .git file names, or its .git directory.
func worktreeGitDir(tree string) (string, bool) {
	p := filepath.Join(tree, ".git")
	fi, err := os.Lstat(p)
	if err != nil {
		return "", false
	}
	if fi.IsDir() {
		return p, true
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return "", false
	}
	dir, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir: ")
	if !ok {
		return "", false
	}
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(tree, dir)
	}
	return dir, true
}

// headCommit is the commit the worktree's HEAD (in gitDir) names, read
// from files: detached, or a branch's loose ref or its packed-refs line;
// "" when it cannot tell that way (a symbolic chain, the reftable
// backend, an unborn branch).
func (t *Tree) headCommit(gitDir string) string {
	b, err := os.ReadFile(filepath.Join(gitDir, "HEAD"))
	if err != nil {
		return ""
	}
	s := strings.TrimSpace(string(b))
	ref, symbolic := strings.CutPrefix(s, "ref: ")
	if !symbolic {
		return hexOID(s)
	}
	common := t.repo.CommonDir
	if common == "" || !strings.HasPrefix(ref, "refs/heads/") || strings.Contains(ref, "..") {
		return ""
	}
	if _, err := os.Lstat(filepath.Join(common, "reftable")); !os.IsNotExist(err) {
		return ""
	}
	if b, err := os.ReadFile(filepath.Join(common, filepath.FromSlash(ref))); err == nil {
		return hexOID(strings.TrimSpace(string(b)))
	} else if !os.IsNotExist(err) {
		return ""
	}
	packed, err := os.ReadFile(filepath.Join(common, "packed-refs"))
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(packed), "\n") {
		if id, name, ok := strings.Cut(line, " "); ok && name == ref {
			return hexOID(id)
		}
	}
	return ""
}

// hexOID is s when it is an object id in hex, else "".
func hexOID(s string) string {
	if len(s) != 40 && len(s) != 64 {
		return ""
	}
	if _, err := hex.DecodeString(s); err != nil {
		return ""
	}
	return s
}
