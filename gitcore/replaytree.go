package gitcore

import (
	"context"
	"errors"
)

// PickCommit is what ReplayTree needs of a commit: its id, its tree, and
// its first parent with that parent's tree (so no git call looks them up).
type PickCommit struct {
	ID         string
	Tree       string
	Parent     string
	ParentTree string
}

// PickCommits turns a base..tip list (oldest first, as Commits returns it)
// into PickCommits. baseTree is the tree of the first commit's parent.
func PickCommits(commits []Commit, baseTree string) []PickCommit {
	out := make([]PickCommit, 0, len(commits))
	prevTree := baseTree
	for _, c := range commits {
		p := PickCommit{ID: c.ID, Tree: c.Tree, ParentTree: prevTree}
		if len(c.Parents) > 0 {
			p.Parent = c.Parents[0]
		}
		out = append(out, p)
		prevTree = c.Tree
	}
	return out
}

// ReplayTree is Replay without writing the replayed commits: the tree a
// cherry-pick of commits onto onto (whose tree is ontoTree) ends with, or
// the commit that conflicts and its files. The forecast uses it, so that
// judging a land costs one merge per commit and no other git call.
//
// baseInOnto says that the first commit's parent is an ancestor of onto:
// the merge base of onto and that commit is then exactly its parent, which
// is cherry-pick's base, so onto is merged with it directly instead of
// through a throwaway commit. Every later commit forces its base as Replay
// does.
func (r *Repo) ReplayTree(ctx context.Context, onto, ontoTree string, commits []PickCommit, baseInOnto bool) (string, *ReplayConflict, error) {
	cur := ontoTree
	for i, c := range commits {
		var next string
		var files []string
		var err error
		switch {
		case c.ParentTree == cur:
			next = c.Tree
		case c.Tree == c.ParentTree:
			next = cur // an empty commit changes nothing
		case c.Parent == "":
			return "", nil, errRootCommit
		case i == 0 && baseInOnto:
			next, files, err = r.mergeTree(ctx, onto, c.ID)
		default:
			var ours string
			if ours, err = r.WriteCommit(ctx, cur, []string{c.Parent}, "agency: replay base\n", nil, Writer{}); err == nil {
				next, files, err = r.mergeTree(ctx, ours, c.ID)
			}
		}

		if err != nil {
			return "", nil, err
		}
		if files == nil && next == "" {
			return "", nil, errNoTree
		}
		if files != nil {
			return "", &ReplayConflict{Commit: Commit{ID: c.ID, Tree: c.Tree, Parents: []string{c.Parent}}, Files: files}, nil
		}

		cur = next
	}

	return cur, nil, nil
}

var errNoTree = errors.New("git merge-tree gave neither a tree nor conflicts")
