package gitcore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Commit is one commit as replay needs it.
type Commit struct {
	ID      string
	Parents []string
	Tree    string
	// AuthorName, AuthorEmail and AuthorDate (git's raw "<unix> <tz>") are
	// kept by a replay, as cherry-pick keeps them.
	AuthorName  string
	AuthorEmail string
	AuthorDate  string
	Subject     string
	// Message is the raw message (%B), kept byte for byte.
	Message string
}

// Commits lists the commits of base..tip, oldest first (cherry-pick's order).
func (r *Repo) Commits(ctx context.Context, base, tip string) ([]Commit, error) {
	// --encoding=UTF-8: i18n.logOutputEncoding would re-encode messages
	// that a replay writes back as they are read.
	out, err := r.query(ctx, "log", "--reverse", "-z", "--date=raw", "--encoding=UTF-8",
		"--format=%H%x01%P%x01%T%x01%an%x01%ae%x01%ad%x01%s%x01%B", base+".."+tip, "--")
	if err != nil {
		return nil, err
	}

	var list []Commit
	for _, rec := range strings.Split(string(out), "\x00") {
		if rec == "" {
			continue
		}

		f := strings.SplitN(rec, "\x01", 8)
		if len(f) != 8 {
			continue
		}

		list = append(list, Commit{ID: f[0], Parents: strings.Fields(f[1]), Tree: f[2],
			AuthorName: f[3], AuthorEmail: f[4], AuthorDate: f[5], Subject: f[6], Message: f[7]})
	}

	return list, nil
}

// IsAncestor reports whether a is an ancestor of (or equal to) b.
func (r *Repo) IsAncestor(ctx context.Context, a, b string) (bool, error) {
	_, err := r.query(ctx, "merge-base", "--is-ancestor", a, b)
	if err != nil {
		if exitCode(err) == 1 {
			return false, nil
		}
		return false, err
	}
	return true, nil
}

// Writer says whose commits a replay writes.
type Writer struct {
	// User: the commits land puts on a branch, as the user (their
	// committer identity, and author where the commit has none). Otherwise
	// git-agency's own identity (ownIdentity): predictions and throwaway
	// commits that no branch ever holds need no user identity.
	User bool
	// Sign: sign each commit (`commit-tree -S`, with the user's gpg.format
	// and user.signingkey), as cherry-pick does under commit.gpgsign.
	Sign bool
}

// ownIdentity is the author and committer of git-agency's own commits
// (checkpoints, snapshots, replay bases): they are never on a branch the
// user works on, and must not depend on user.name and user.email.
var ownIdentity = []string{"GIT_AUTHOR_NAME=git-agency", "GIT_AUTHOR_EMAIL=git-agency@localhost",
	"GIT_COMMITTER_NAME=git-agency", "GIT_COMMITTER_EMAIL=git-agency@localhost"}

// SignError is a commit that could not be signed: Err is git's error
// (what gpg or ssh-keygen said is in its stderr).
type SignError struct{ Err error }

func (e *SignError) Error() string { return e.Err.Error() }
func (e *SignError) Unwrap() error { return e.Err }

// WriteCommit writes a commit object of tree with parents and message (kept
// verbatim), as w says. env may set GIT_AUTHOR_* to keep an original author.
// The message is UTF-8 (Commits reads messages so, a prompt is), and the
// commit says so: under i18n.commitEncoding=ISO-8859-1 commit-tree would
// label the UTF-8 bytes as that, and every reader would garble them.
func (r *Repo) WriteCommit(ctx context.Context, tree string, parents []string, message string, env []string, w Writer) (string, error) {
	args := []string{"-c", "i18n.commitEncoding=UTF-8", "commit-tree", tree}
	for _, p := range parents {
		args = append(args, "-p", p)
	}
	if w.Sign {
		args = append(args, "-S")
	}
	if !w.User {
		env = append(append([]string{}, ownIdentity...), env...)
	}

	out, err := r.exec(ctx, r.Toplevel, env, []byte(message), args...)
	if err != nil {
		if w.Sign {
			return "", &SignError{Err: err}
		}
		return "", err
	}

	return strings.TrimSpace(string(out)), nil
}

// mergeTree merges ours and theirs with `git merge-tree --write-tree`
// (merge-ort, the engine of cherry-pick and merge) without touching any
// index or working tree. It returns the merged tree, or the conflicted
// paths (and no error) when the merge conflicts.
func (r *Repo) mergeTree(ctx context.Context, ours, theirs string) (string, []string, error) {
	out, err := r.query(ctx, "merge-tree", "--write-tree", "--name-only", "--no-messages", "-z", ours, theirs)
	if err != nil && exitCode(err) != 1 {
		return "", nil, err
	}

	fields := strings.Split(string(out), "\x00")
	tree := fields[0]
	if err == nil {
		return tree, nil, nil
	}

	var files []string
	seen := map[string]bool{}
	for _, f := range fields[1:] {
		if f != "" && !seen[f] {
			seen[f] = true
			files = append(files, f)
		}
	}

	if len(files) == 0 {
		// Exit 1 is a conflict only with the conflicted files listed; without
		// them the merge is neither clean nor a conflict we can name.
		return "", nil, err
	}

	return "", files, nil
}

// ReplayConflict is the commit a replay stopped at and its conflicted files.
type ReplayConflict struct {
	Commit Commit
	Files  []string
}

// ReplayResult is what Replay produced.
type ReplayResult struct {
	// Tip is the last new commit (onto itself when nothing was written).
	Tip string
	// Written are the new commits, oldest first; Skipped are the commits
	// whose changes were already present (they would have become empty).
	Written []string
	Skipped []string
	// Conflict is set when a commit does not apply; Tip is then "".
	Conflict *ReplayConflict
}

// Replay applies commits on top of onto exactly as `git cherry-pick` would
// (each one a three-way merge of onto's tree and the commit, with the
// commit's first parent as base) but in the object database only: no
// index, working tree, sequencer state or ref is touched, so a conflict
// leaves nothing to abort and the same code predicts (`land --check`) and
// lands.
//
// git 2.39 has no `merge-tree --merge-base`, so the base is forced: for a
// commit C with parent P, a throwaway commit with the current tree and P as
// its only parent is merged with C; the merge base of the two is exactly P,
// which is cherry-pick's base. When the current tree already equals P's
// tree the merge is trivial and skipped. Each applied commit is then
// written with the original author, date and message and the committer w
// says (signed when w says). A commit that would become empty is skipped (it was already
// applied); an originally empty commit is kept.
func (r *Repo) Replay(ctx context.Context, onto string, commits []Commit, w Writer) (*ReplayResult, error) {
	res := &ReplayResult{Tip: onto}
	curTree, err := r.TreeOf(ctx, onto)
	if err != nil {
		return nil, err
	}

	trees := map[string]string{}
	for _, c := range commits {
		trees[c.ID] = c.Tree
	}

	treeOf := func(id string) (string, error) {
		if t, ok := trees[id]; ok {
			return t, nil
		}
		t, err := r.TreeOf(ctx, id)
		if err == nil {
			trees[id] = t
		}
		return t, err
	}
	for _, c := range commits {
		parentTree := emptyTree
		if len(c.Parents) > 0 {
			if parentTree, err = treeOf(c.Parents[0]); err != nil {
				return nil, err
			}
		}

		newTree, conflicts, err := r.pickTree(ctx, curTree, parentTree, c)
		if err != nil {
			return nil, err
		}

		if conflicts != nil {
			res.Tip = ""
			res.Conflict = &ReplayConflict{Commit: c, Files: conflicts}
			return res, nil
		}

		if newTree == curTree && c.Tree != parentTree {
			res.Skipped = append(res.Skipped, c.ID)
			continue
		}

		var env []string // no author: the current user's identity
		if c.AuthorName != "" || c.AuthorEmail != "" {
			env = []string{"GIT_AUTHOR_NAME=" + c.AuthorName, "GIT_AUTHOR_EMAIL=" + c.AuthorEmail, "GIT_AUTHOR_DATE=" + c.AuthorDate}
		}

		id, err := r.WriteCommit(ctx, newTree, []string{res.Tip}, c.Message, env, w)
		if err != nil {
			return nil, err
		}

		res.Tip, curTree = id, newTree
		res.Written = append(res.Written, id)
	}

	return res, nil
}

// pickTree is the tree of cherry-picking c (whose first parent has tree
// parentTree) onto a commit whose tree is cur, or the conflicted paths.
func (r *Repo) pickTree(ctx context.Context, cur, parentTree string, c Commit) (string, []string, error) {
	switch {
	case parentTree == cur:
		return c.Tree, nil, nil
	case c.Tree == parentTree:
		return cur, nil, nil // an empty commit changes nothing
	case len(c.Parents) == 0:
		// A root commit: merge-tree would need unrelated histories.
		return "", nil, errRootCommit
	}

	ours, err := r.WriteCommit(ctx, cur, []string{c.Parents[0]}, "agency: replay base\n", nil, Writer{})
	if err != nil {
		return "", nil, err
	}

	return r.mergeTree(ctx, ours, c.ID)
}

// emptyTree is git's empty tree (SHA-1 repositories).
const emptyTree = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"

var errRootCommit = errors.New("cannot replay a root commit onto other history")

// fastForward moves the tree's checked-out branch from `from` to `to` (a
// descendant) and updates its index and files, like a fast-forward merge:
// SwitchFiles (`read-tree -m -u`, which refuses to overwrite local changes
// or untracked files) then MoveHead. It is all or nothing: when read-tree
// fails part way (a full disk) the files it wrote are put back, and when
// MoveHead fails (a stale .lock on the branch's ref) the index and files
// are put back (unless HEAD moved meanwhile). When read-tree refuses
// because paths that differ between from and to have local changes or
// untracked files in the way, the error is a *BlockedError naming them;
// HEAD, index and files are then as they were.
func (t *Tree) fastForward(ctx context.Context, from, to, reflog string) error {
	if err := t.SwitchFiles(ctx, from, to); err != nil {
		return err
	}

	if err := t.MoveHead(ctx, from, to, reflog); err != nil {
		// Put the index and files back so the tree is as it was, unless
		// HEAD moved meanwhile: then they are no longer ours to touch.
		if head, herr := t.Head(ctx); herr == nil && head == from {
			if _, rerr := t.run(ctx, "read-tree", "-m", "-u", to, from); rerr != nil {
				return fmt.Errorf("%w; putting the files back to %s also failed: %v", err, from, rerr)
			}
		}
		return err
	}

	return nil
}

// FastForwardBranch is fastForward of the tree's branch named branch:
// the same files step, then a compare-and-swap of refs/heads/<branch>
// (never whatever HEAD points at): when the tree was switched to another
// branch meanwhile, the named branch still moves only from `from`, and the
// caller (the land's gate) has refused a tree off its branch before.
func (t *Tree) FastForwardBranch(ctx context.Context, branch, from, to, reflog string) error {
	if err := t.SwitchFiles(ctx, from, to); err != nil {
		return err
	}

	if err := t.repo.MoveBranch(ctx, branch, from, to, reflog); err != nil {
		if tip, terr := t.repo.RevParse(ctx, "refs/heads/"+branch); terr == nil && tip == from {
			if _, rerr := t.run(ctx, "read-tree", "-m", "-u", to, from); rerr != nil {
				return fmt.Errorf("%w; putting the files back to %s also failed: %v", err, from, rerr)
			}
		}
		return err
	}

	return nil
}

// MoveBranch points refs/heads/<branch> at `to` if it still points at
// `from` (a compare-and-swap update-ref), with reflog as the reflog
// message (git writes HEAD's reflog too when HEAD is that branch).
func (r *Repo) MoveBranch(ctx context.Context, branch, from, to, reflog string) error {
	_, err := r.run(ctx, "update-ref", "-m", reflog, "refs/heads/"+branch, to, from)
	return err
}

// SwitchFiles updates the tree's index and files from `from`'s tree to
// `to`'s, leaving HEAD alone (fastForward's first half; undo moves HEAD
// first): `read-tree -m -u from to`. Paths in the way (local changes,
// untracked files) are a *BlockedError naming them, nothing changed; a
// read-tree that failed part way has its files put back.
func (t *Tree) SwitchFiles(ctx context.Context, from, to string) error {
	// What is in the way is judged before read-tree: after a failure part
	// way, the files it wrote would look in the way too. The same status
	// refreshes the index's stat data of those paths (and only those), so
	// that read-tree, which compares stat data, does not take a file that
	// was only touched for a local change.
	blocking, berr := t.blockingPaths(ctx, from, to, true)
	if _, err := t.run(ctx, "read-tree", "-m", "-u", from, to); err != nil {
		if berr == nil && len(blocking) > 0 {
			return &BlockedError{Paths: blocking, Err: err}
		}

		// It failed part way (a full disk): some files may be written.
		// Put them back so the tree is as it was and a retry can succeed.
		if rerr := t.undoPartialReadTree(ctx, from, to); rerr != nil {
			return fmt.Errorf("%w; putting the files back to %s also failed: %v", err, from, rerr)
		}

		return err
	}

	return nil
}

// undoPartialReadTree puts the tree back to `from` after a `read-tree -m -u
// from to` that failed part way (ENOSPC while writing files): HEAD and the
// index are still `from` (git writes the index last), but some of the paths
// that differ between from and to may hold to's content, or exist although
// from has no such path. Those paths (and only those: read-tree refused up
// front if any had local changes) are checked out from the index again, or
// removed. If the index was written after all, a two-tree read-tree undoes
// it. Nothing is done when HEAD is neither from nor to (SwitchFiles runs
// with HEAD at from in fastForward, at to in undo).
func (t *Tree) undoPartialReadTree(ctx context.Context, from, to string) error {
	if head, err := t.Head(ctx); err != nil || (head != from && head != to) {
		return err
	}

	if same, err := t.IndexMatches(ctx, to); err != nil {
		return err
	} else if same {
		_, err := t.run(ctx, "read-tree", "-m", "-u", to, from)
		return err
	}

	changed, err := t.repo.DiffNames(ctx, from, to)
	if err != nil || len(changed) == 0 {
		return err
	}

	out, err := t.query(ctx, append([]string{"--literal-pathspecs", "ls-files", "-z", "--"}, changed...)...)
	if err != nil {
		return err
	}

	tracked := map[string]bool{}
	for _, p := range splitZ(out) {
		tracked[p] = true
	}

	var restore []string
	for _, p := range changed {
		if tracked[p] {
			restore = append(restore, p)
			continue
		}

		full := filepath.Join(t.Path, filepath.FromSlash(p))
		if err := os.Remove(full); err != nil && !os.IsNotExist(err) {
			return err
		}

		// Directories read-tree made for it, now empty.
		for d := filepath.Dir(full); d != filepath.Clean(t.Path) && strings.HasPrefix(d, filepath.Clean(t.Path)); d = filepath.Dir(d) {
			if os.Remove(d) != nil {
				break
			}
		}
	}

	if len(restore) > 0 {
		if _, err := t.run(ctx, append([]string{"--literal-pathspecs", "checkout-index", "-f", "-q", "--"}, restore...)...); err != nil {
			return err
		}
	}

	return nil
}

// MoveHead points the tree's HEAD (its checked-out branch) at `to` if it
// still points at `from` (a compare-and-swap update-ref), with reflog as
// the reflog message. Index and files are left alone.
func (t *Tree) MoveHead(ctx context.Context, from, to, reflog string) error {
	_, err := t.run(ctx, "update-ref", "-m", reflog, "HEAD", to, from)
	return err
}

// BlockedError is fastForward refused: local changes or untracked files
// are in the way of Paths. Err is git's own error.
type BlockedError struct {
	Paths []string
	Err   error
}

func (e *BlockedError) Error() string { return e.Err.Error() }
func (e *BlockedError) Unwrap() error { return e.Err }

// IndexMatches reports whether the tree's index holds exactly rev's tree.
func (t *Tree) IndexMatches(ctx context.Context, rev string) (bool, error) {
	_, err := t.query(ctx, "diff-index", "--cached", "--quiet", "--ignore-submodules=none", rev, "--")
	if err != nil {
		if exitCode(err) == 1 {
			return false, nil
		}
		return false, err
	}
	return true, nil
}

// DiffOptions shape a diff's text.
type DiffOptions struct {
	Color bool
	Stat  bool
	// Patch adds the patch after the stat (with Stat).
	Patch bool
}

func (o DiffOptions) args() []string {
	a := []string{"--no-ext-diff"}
	if o.Color {
		a = append(a, "--color=always")
	} else {
		a = append(a, "--no-color")
	}

	if o.Stat {
		a = append(a, "--stat")
	}
	if o.Patch {
		a = append(a, "--patch")
	}

	return a
}

// Diff returns `git diff from to` (commits or trees) as text. A changed
// submodule commit is always shown (--ignore-submodules=none: the user's
// diff.ignoreSubmodules or submodule.<name>.ignore would hide what lands).
func (r *Repo) Diff(ctx context.Context, from, to string, o DiffOptions) ([]byte, error) {
	args := append([]string{"diff", "--ignore-submodules=none"}, o.args()...)
	return r.query(ctx, append(args, from, to, "--")...)
}

// DiffNames returns the paths that differ between from and to.
func (r *Repo) DiffNames(ctx context.Context, from, to string) ([]string, error) {
	// --no-renames: with rename detection (diff.renames, on by default) a
	// renamed file would be listed by its new name only;
	// --ignore-submodules=none: diff.ignoreSubmodules would hide a changed
	// submodule commit.
	out, err := r.query(ctx, "diff", "--no-ext-diff", "--no-renames", "--ignore-submodules=none", "--name-only", "-z", from, to, "--")
	if err != nil {
		return nil, err
	}
	return splitZ(out), nil
}

// LogOneline returns `git log --oneline from..to` as text.
func (r *Repo) LogOneline(ctx context.Context, from, to string, color bool) ([]byte, error) {
	c := "--no-color"
	if color {
		c = "--color=always"
	}
	return r.query(ctx, "log", "--oneline", "--no-decorate", c, from+".."+to, "--")
}

// Pager returns the pager git would use (core.pager, $GIT_PAGER, $PAGER,
// less), or "" for none ("cat").
func (r *Repo) Pager(ctx context.Context) string {
	out, err := r.query(ctx, "var", "GIT_PAGER")
	if err != nil {
		return ""
	}
	p := strings.TrimSpace(string(out))
	if p == "cat" {
		return ""
	}
	return p
}

// splitZ splits NUL-terminated output, dropping the empty tail.
func splitZ(b []byte) []string {
	var out []string
	for _, f := range bytes.Split(b, []byte{0}) {
		if len(f) > 0 {
			out = append(out, string(f))
		}
	}
	return out
}
