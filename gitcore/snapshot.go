package gitcore

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// SnapshotRequest says what a snapshot tree of a worktree's uncommitted state
// holds.
type SnapshotRequest struct {
	// IncludeUntracked adds untracked (not ignored) files, like `add -A`;
	// otherwise only tracked files are updated, like `add -u`.
	IncludeUntracked bool
	// Denylist holds glob patterns of untracked files that must never enter
	// a snapshot. A pattern without '/' matches a file name at any depth
	// (".env", "*.pem"); one with '/' matches from the tree's root
	// ("config/secret.yml"); a trailing '/' names a directory. Only checked
	// when IncludeUntracked is set.
	Denylist []string
	// Exclude lists paths (files or directories, relative to the root) that
	// are never staged, e.g. ".agency".
	Exclude []string
}

// Snapshot is the result of Tree.SnapshotTree.
type Snapshot struct {
	// Head is the commit HEAD pointed at ("" on an unborn branch).
	Head string
	// Tree is the snapshot tree id; "" when Denied is not empty.
	Tree string
	// Denied lists untracked files that match the denylist. When it is not
	// empty nothing was staged and no object was written.
	Denied []string
}

// DenylistPathspecs turns denylist globs into git pathspecs (glob magic).
func DenylistPathspecs(patterns []string) []string {
	var out []string
	for _, p := range patterns {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		dir := strings.HasSuffix(p, "/")
		p = strings.TrimRight(p, "/")
		if p == "" {
			continue
		}
		anchored := strings.HasPrefix(p, "/") || strings.Contains(p, "/")
		p = strings.TrimLeft(p, "/")
		if !anchored {
			p = "**/" + p
		}
		if dir {
			p += "/**"
		}
		out = append(out, ":(glob)"+p)
	}
	return out
}

// SnapshotTree writes a tree object of the worktree's current state (HEAD
// plus every uncommitted change) without touching its index, HEAD or files:
// the worktree's index is copied to a temporary index, `git add -A` (or
// `-u`) stages into the copy, and `git write-tree` writes it.
//
// With IncludeUntracked, untracked files are first checked against the
// denylist (`git ls-files -o --exclude-standard`); on a hit nothing is
// staged and Snapshot.Denied names the files. The add itself also excludes
// the denylisted patterns, so a file that appears between the check and the
// add can never be hashed into the object store. Tracked files that match
// the denylist are snapshotted like any other tracked file (their content is
// already in the repository's history).
func (t *Tree) SnapshotTree(ctx context.Context, req SnapshotRequest) (*Snapshot, error) {
	head, err := t.Head(ctx)
	if err != nil {
		return nil, err
	}
	snap := &Snapshot{Head: head}
	var excludes []string
	for _, e := range req.Exclude {
		excludes = append(excludes, ":(exclude,literal)"+strings.Trim(e, "/"))
	}
	deny := DenylistPathspecs(req.Denylist)
	var trackedHits []string
	if req.IncludeUntracked && len(deny) > 0 {
		args := append([]string{"ls-files", "-z", "-t", "-c", "-o", "--exclude-standard", "--"}, deny...)
		out, err := t.Query(ctx, args...)
		if err != nil {
			return nil, err
		}
		for _, f := range strings.Split(string(out), "\x00") {
			if len(f) < 3 {
				continue
			}
			tag, path := f[0], f[2:]
			if excluded(path, req.Exclude) {
				continue
			}
			if tag == '?' {
				snap.Denied = append(snap.Denied, path)
			} else {
				trackedHits = append(trackedHits, path)
			}
		}
		if len(snap.Denied) > 0 {
			return snap, nil
		}
	}

	tmp, err := t.tempIndex(ctx)
	if err != nil {
		return nil, err
	}
	defer os.Remove(tmp)
	env := []string{"GIT_INDEX_FILE=" + tmp}
	if req.IncludeUntracked {
		args := append([]string{"add", "-A", "--", "."}, excludes...)
		for _, d := range deny {
			args = append(args, ":(exclude,"+strings.TrimPrefix(d, ":("))
		}
		if _, err := t.RunEnv(ctx, env, nil, args...); err != nil {
			return nil, err
		}
		if len(trackedHits) > 0 {
			args := []string{"add", "-u", "--"}
			for _, p := range trackedHits {
				args = append(args, ":(literal)"+p)
			}
			if _, err := t.RunEnv(ctx, env, nil, args...); err != nil {
				return nil, err
			}
		}
	} else {
		args := append([]string{"add", "-u", "--", "."}, excludes...)
		if _, err := t.RunEnv(ctx, env, nil, args...); err != nil {
			return nil, err
		}
	}
	out, err := t.RunEnv(ctx, env, nil, "write-tree")
	if err != nil {
		return nil, err
	}
	snap.Tree = strings.TrimSpace(string(out))
	return snap, nil
}

func excluded(path string, excl []string) bool {
	for _, e := range excl {
		e = strings.Trim(e, "/")
		if path == e || strings.HasPrefix(path, e+"/") {
			return true
		}
	}
	return false
}

// tempIndex copies the worktree's index to a new file next to it (the git
// directory: same filesystem, and split-index files stay findable) and
// returns its path. Without an index, the path of a not-yet-existing file is
// returned (git starts from an empty index).
func (t *Tree) tempIndex(ctx context.Context) (string, error) {
	out, err := t.Query(ctx, "rev-parse", "--git-path", "index")
	if err != nil {
		return "", err
	}
	index := strings.TrimRight(string(out), "\n")
	if !filepath.IsAbs(index) {
		index = filepath.Join(t.Path, index)
	}
	f, err := os.CreateTemp(filepath.Dir(index), "agency-snapshot-index-*")
	if err != nil {
		return "", err
	}
	name := f.Name()
	src, err := os.Open(index)
	if err != nil {
		f.Close()
		os.Remove(name)
		if os.IsNotExist(err) {
			return name, nil
		}
		return "", err
	}
	defer src.Close()
	if _, err := io.Copy(f, src); err != nil {
		f.Close()
		os.Remove(name)
		return "", err
	}
	if err := f.Close(); err != nil {
		os.Remove(name)
		return "", err
	}
	return name, nil
}
