package gitcore

import (
	"path/filepath"

	"github.com/git-agency/git-agency/gitcore/internal/index"
	"github.com/git-agency/git-agency/gitcore/internal/repofiles"
)

// indexPlain reports whether the index file at p holds only entries that
// staging a path from its file treats alike in any index: stage 0, no
// assume-unchanged, skip-worktree or intent-to-add flag, no sparse
// directory, and is not split; and whether it holds a gitlink
// (submodule). Any doubt (another version, a read error) says not plain.
// oidLen is the object ids' length in bytes.
//
// The file is mapped, never copied: at 100k files an index is 9 MB, which
// a supervisor checking it on every full checkpoint would otherwise hold,
// and its heap double for, at each one.
func indexPlain(p string, oidLen int) (plain, gitlinks bool) {
	links, ok := scanIndex(p, oidLen, (*index.Entry).Plain)
	return ok, ok && links
}

// MayHoldGitlinks reports whether the tree's index may hold a gitlink: a
// submodule, with or without a .gitmodules (a repository embedded by
// `git add`). False only when the index file, read with no git call, is
// proven to hold none; any doubt (a split index, another version, a HEAD
// it cannot read from files) says it may.
func (t *Tree) MayHoldGitlinks() bool {
	gitDir, ok := repofiles.WorktreeGitDir(t.Path)
	if !ok {
		return true
	}
	oidLen := len(t.headCommit(gitDir)) / 2
	if oidLen != 20 && oidLen != 32 {
		return true
	}
	links, ok := indexGitlinks(filepath.Join(gitDir, "index"), oidLen)
	return links || !ok
}

// indexGitlinks reports whether the index file at p holds a gitlink; ok is
// false when it could not tell (a read error, another version, a split
// index, whose entries live elsewhere). Flags (skip-worktree, sparse
// directories, conflict stages) do not matter: only the modes are read.
func indexGitlinks(p string, oidLen int) (links, ok bool) {
	return scanIndex(p, oidLen, func(*index.Entry) bool { return true })
}

// scanIndex walks the index file at p: ok is false when an entry fails
// accept, the file is not one index reads, or it is split or sparse (a
// "link" or "sdir" extension: its entries live elsewhere or are
// collapsed); links tells whether an entry is a gitlink.
func scanIndex(p string, oidLen int, accept func(*index.Entry) bool) (links, ok bool) {
	f, ok := index.Map(p)
	if !ok {
		return false, false
	}
	defer f.Close()
	it, ok := index.Entries(f.Data, oidLen)
	if !ok {
		return false, false
	}

	for it.Next() {
		e := it.Entry()
		if !accept(e) {
			return false, false
		}
		links = links || e.Gitlink()
	}

	exts, ok := it.Extensions()
	for _, x := range exts {
		if x.Sig == "link" || x.Sig == "sdir" {
			return false, false
		}
	}

	return links, ok
}
