package gitcore

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// RefTips resolves many refs (full names) in one `git for-each-ref`: the
// commit each one points at. Refs that do not exist are absent. The
// answer is copied from the last one, without running git, while the
// files it came from are unchanged (see tipsMemo).
func (r *Repo) RefTips(ctx context.Context, refs ...string) (map[string]string, error) {
	tips := map[string]string{}
	if len(refs) == 0 {
		return tips, nil
	}

	key := strings.Join(refs, "\x00")
	stamps, keep := r.refStamps(refs)
	if keep {
		if t, ok := r.tips.lookup(key, stamps); ok {
			for k, v := range t {
				tips[k] = v
			}
			return tips, nil
		}
	}

	want := map[string]bool{}
	for _, ref := range refs {
		want[ref] = true
	}

	out, err := r.query(ctx, append([]string{"for-each-ref", "--format=%(refname)%00%(objectname)", "--"}, refs...)...)
	if err != nil {
		return nil, err
	}

	for _, line := range strings.Split(string(out), "\n") {
		name, obj, ok := strings.Cut(line, "\x00")
		if ok && want[name] {
			tips[name] = obj
		}
	}

	if keep {
		r.tips.store(key, stamps, tips)
	}

	return tips, nil
}

// IndexStamp is a cheap fingerprint of a linked worktree's index file (its
// size and modification time), read without running git: it changes when
// git writes the index (add, commit, reset, checkout). "" when unknown.
func IndexStamp(tree string) string {
	data, err := os.ReadFile(filepath.Join(tree, ".git"))
	if err != nil {
		return ""
	}

	dir, ok := strings.CutPrefix(strings.TrimSpace(string(data)), "gitdir: ")
	if !ok {
		return ""
	}
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(tree, dir)
	}

	fi, err := os.Stat(filepath.Join(dir, "index"))
	if err != nil {
		return ""
	}

	return fmt.Sprintf("%d.%d", fi.Size(), fi.ModTime().UnixNano())
}
