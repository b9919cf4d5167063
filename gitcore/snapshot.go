package gitcore

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
)

// SnapshotRequest says what a snapshot tree of a worktree's uncommitted
// state holds. (Same shape as the checkpoint code's, which shares it.)
type SnapshotRequest struct {
	// IncludeUntracked adds untracked (not ignored) files, as `add -A`;
	// without it only tracked files are staged, as `add -u`.
	IncludeUntracked bool
	// Denylist patterns (see Denied) checked against untracked files
	// BEFORE anything is staged.
	Denylist []string
	// Exclude lists paths (files or directories, relative to the root)
	// that are never staged.
	Exclude []string
}

// Snapshot is the result of SnapshotTree.
type Snapshot struct {
	// Head is the commit the tree's HEAD pointed at.
	Head string
	// Tree is the snapshot tree ("" when Denied is not empty).
	Tree string
	// Denied are the untracked files that matched the denylist; when there
	// are any nothing was staged.
	Denied []string
}

func excludedPath(p string, excl []string) bool {
	for _, e := range excl {
		e = strings.Trim(e, "/")
		if p == e || strings.HasPrefix(p, e+"/") {
			return true
		}
	}
	return false
}

// SnapshotTree writes a tree object holding the tree's working files
// (tracked changes and, with IncludeUntracked, untracked files) without
// touching its index: a copy of the index (GIT_INDEX_FILE), staged, then
// `write-tree`. Untracked files are listed and checked against the
// denylist first; when any match, nothing is staged and Snapshot.Denied
// says which.
func (t *Tree) SnapshotTree(ctx context.Context, o SnapshotRequest) (*Snapshot, error) {
	head, err := t.Head(ctx)
	if err != nil {
		return nil, err
	}
	snap := &Snapshot{Head: head}
	var allowed []string
	if o.IncludeUntracked {
		out, err := t.Query(ctx, "ls-files", "-z", "--others", "--exclude-standard")
		if err != nil {
			return nil, err
		}
		for _, f := range splitZ(out) {
			switch {
			case excludedPath(f, o.Exclude):
			case Denied(f, o.Denylist):
				snap.Denied = append(snap.Denied, f)
			default:
				allowed = append(allowed, f)
			}
		}
		if len(snap.Denied) > 0 {
			return snap, nil
		}
	}
	idxOut, err := t.Query(ctx, "rev-parse", "--path-format=absolute", "--git-path", "index")
	if err != nil {
		return nil, err
	}
	tmp, err := os.CreateTemp("", "agency-index-*")
	if err != nil {
		return nil, err
	}
	tmpPath := tmp.Name()
	tmp.Close()
	defer os.Remove(tmpPath)
	env := []string{"GIT_INDEX_FILE=" + tmpPath}
	if data, err := os.ReadFile(filepath.Clean(strings.TrimSpace(string(idxOut)))); err == nil {
		if err := os.WriteFile(tmpPath, data, 0o600); err != nil {
			return nil, err
		}
	} else {
		os.Remove(tmpPath)
		if head != "" {
			if _, err := t.RunEnv(ctx, env, nil, "read-tree", head); err != nil {
				return nil, err
			}
		}
	}
	args := []string{"add", "-u", "--", ":/"}
	for _, e := range o.Exclude {
		args = append(args, ":(top,exclude,literal)"+strings.Trim(e, "/"))
	}
	if _, err := t.RunEnv(ctx, env, nil, args...); err != nil {
		return nil, err
	}
	if len(allowed) > 0 {
		var list bytes.Buffer
		for _, f := range allowed {
			list.WriteString(f)
			list.WriteByte(0)
		}
		lit := append(env, "GIT_LITERAL_PATHSPECS=1")
		if _, err := t.RunEnv(ctx, lit, list.Bytes(), "add", "--pathspec-from-file=-", "--pathspec-file-nul"); err != nil {
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

// TreeOf returns the tree id of a commit (or tree-ish).
func (r *Repo) TreeOf(ctx context.Context, rev string) (string, error) {
	out, err := r.query(ctx, "rev-parse", "-q", "--verify", "--end-of-options", rev+"^{tree}")
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}
