package gitcore

import (
	"os"
	"path/filepath"
	"strings"
)

// LinkedGitDir is the git directory of the linked worktree at tree
// (<common>/worktrees/<name>), read from its `.git` file without running
// git, absolute and with symlinks resolved. "" when tree has no such file.
func LinkedGitDir(tree string) string {
	data, err := os.ReadFile(filepath.Join(tree, ".git"))
	if err != nil {
		return ""
	}
	dir, ok := strings.CutPrefix(strings.TrimSpace(string(data)), "gitdir: ")
	if !ok || dir == "" {
		return ""
	}
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(tree, dir)
	}
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	return filepath.Clean(dir)
}
