package gitcore

import (
	"context"
	"os"
	"path/filepath"
	"strings"
)

// BlockingPaths are the paths fastForward(from, to) would refuse to
// overwrite (see blockingPaths): land --check asks before it lands.
func (t *Tree) BlockingPaths(ctx context.Context, from, to string) ([]string, error) {
	return t.blockingPaths(ctx, from, to, false)
}

// maxWayPathspecs bounds the paths a status is limited to: past it (or
// past maxWayPathspecBytes of them) the whole tree's status is cheaper
// than matching so many pathspecs, and the command line stays short.
const (
	maxWayPathspecs     = 2000
	maxWayPathspecBytes = 128 << 10
)

// blockingPaths are the paths that differ between from and to and that the
// tree has changes (or untracked files) at or under, or an untracked file
// (or symlink) at a leading directory of: the ones a two-tree `read-tree
// -m -u` refuses to overwrite. Only those paths are looked at (a status
// limited to them, and an lstat of their leading directories), so the cost
// follows the change, not the tree. refresh lets the status write the
// index's refreshed stat data of those paths, as `update-index --refresh`
// would for all of them.
func (t *Tree) blockingPaths(ctx context.Context, from, to string, refresh bool) ([]string, error) {
	changed, err := t.repo.DiffNames(ctx, from, to)
	if err != nil || len(changed) == 0 {
		return nil, err
	}

	st, err := t.statusOf(ctx, changed, refresh)
	if err != nil {
		return nil, err
	}

	var out []string
	for _, e := range st {
		if e.Kind == StatusIgnored {
			continue
		}

		for _, c := range changed {
			if e.Path == c || strings.HasPrefix(e.Path, c+"/") || strings.HasPrefix(c, e.Path+"/") {
				out = append(out, e.Path)
				break
			}
		}
	}

	seen := map[string]bool{}
	for _, p := range out {
		seen[p] = true
	}

	for _, p := range t.leadingNonDirs(changed) {
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}

	return out, nil
}

// statusOf is the tree's status (untracked files listed one by one)
// limited to paths and what is under them, or of the whole tree when
// paths are too many to name. refresh runs it as a writer: git then saves
// the index entries it refreshed.
func (t *Tree) statusOf(ctx context.Context, paths []string, refresh bool) ([]StatusEntry, error) {
	args := []string{"--literal-pathspecs", "status", "--porcelain=v2", "-z", "--untracked-files=all", statusSubmodules}
	size := 0
	for _, p := range paths {
		size += len(p) + 1
	}
	var keep func(string) bool
	if len(paths) <= maxWayPathspecs && size <= maxWayPathspecBytes {
		args = append(append(args, "--"), paths...)
		keep = func(sub string) bool { return underAny(sub, paths) }
	}

	exec := t.query
	if refresh {
		exec = t.run
	}

	out, err := exec(ctx, args...)
	if err != nil {
		return nil, err
	}

	st, err := parseStatusV2(out)
	if err != nil {
		return nil, err
	}
	return t.withSubmoduleDirt(st, true, keep), nil
}

// underAny reports whether p is one of paths or lies below one (what a
// literal pathspec of them matches).
func underAny(p string, paths []string) bool {
	for _, q := range paths {
		if p == q || strings.HasPrefix(p, q+"/") {
			return true
		}
	}
	return false
}

// leadingNonDirs are the leading directories of changed that the tree
// holds as something other than a directory (an untracked file or
// symlink: a tracked one that to replaces by a directory is in changed
// itself): read-tree would have to remove them to write below.
func (t *Tree) leadingNonDirs(changed []string) []string {
	isChanged := make(map[string]bool, len(changed))
	for _, c := range changed {
		isChanged[c] = true
	}

	known := map[string]bool{} // leading directory -> blocks
	var out []string
	for _, c := range changed {
		for i := strings.IndexByte(c, '/'); i >= 0; i = nextSlash(c, i) {
			d := c[:i]
			blocks, ok := known[d]
			if !ok {
				fi, err := os.Lstat(filepath.Join(t.Path, filepath.FromSlash(d)))
				blocks = err == nil && !fi.IsDir() && !isChanged[d]
				known[d] = blocks
				if blocks {
					out = append(out, d)
				}
				if err != nil {
					break // nothing below a missing directory
				}
			}

			if blocks {
				break
			}
		}
	}

	return out
}

// nextSlash is the index of the next '/' in s after i, or -1.
func nextSlash(s string, i int) int {
	j := strings.IndexByte(s[i+1:], '/')
	if j < 0 {
		return -1
	}
	return i + 1 + j
}

// HasUntracked reports whether the tree holds an untracked file that is
// not ignored, as `status --untracked-files=normal` lists them (an
// untracked directory counts when it holds one): git's walk of the tree
// for untracked files (`ls-files --others --exclude-standard --directory
// --no-empty-directory`) without the index refresh and diff a status adds.
func (t *Tree) HasUntracked(ctx context.Context) (bool, error) {
	out, err := t.query(ctx, "ls-files", "-z", "--others", "--exclude-standard", "--directory", "--no-empty-directory")
	if err != nil {
		return false, err
	}
	return len(out) > 0, nil
}
