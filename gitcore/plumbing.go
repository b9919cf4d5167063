package gitcore

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/git-agency/git-agency/gitcore/internal/repofiles"
)

// ErrRefExists is returned by CreateRef when the ref already exists.
var ErrRefExists = errors.New("ref already exists")

// CommitTree creates a commit of tree with parent ("" for none) and message,
// not on any branch, and returns its id. It is one of git-agency's own
// commits (a checkpoint, a snapshot): written as ownIdentity, never signed.
//
// The commit is written as a loose object file when the repository allows
// (looseWritable): one git process less on a checkpoint's way.
func (r *Repo) CommitTree(ctx context.Context, tree, parent, msg string) (string, error) {
	if body, ok := ownCommitBody(tree, parent, msg, time.Now()); ok && validIDs(tree, parent) && r.looseWritable() {
		return r.writeLoose("commit", body, len(tree)/2)
	}
	args := []string{"commit-tree", tree}
	if parent != "" {
		args = append(args, "-p", parent)
	}
	out, err := r.exec(ctx, r.Toplevel, ownIdentity, []byte(msg+"\n"), args...)
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}

// CommitterIdent returns the user's committer identity (`git var
// GIT_COMMITTER_IDENT`), or an error when git cannot tell it (no user.name
// or user.email, and none to guess).
func (r *Repo) CommitterIdent(ctx context.Context) (string, error) {
	out, err := r.query(ctx, "var", "GIT_COMMITTER_IDENT")
	return strings.TrimSpace(string(out)), err
}

// SignsCommits reports whether the user's configuration in the tree asks
// for signed commits (commit.gpgsign).
func (t *Tree) SignsCommits(ctx context.Context) (bool, error) {
	return t.configBool(ctx, "commit.gpgsign")
}

// CreateRef creates ref pointing at commit; it fails with ErrRefExists
// (never overwriting) when the ref is already there.
func (r *Repo) CreateRef(ctx context.Context, ref, commit string) error {
	_, err := r.run(ctx, "update-ref", "--no-deref", ref, commit, "")
	if err != nil {
		// update-ref says why only in words: ask whether the ref is there.
		if exists, xerr := r.refExists(ctx, ref); xerr == nil && exists {
			return ErrRefExists
		}
	}
	return err
}

// refExists reports whether ref (a full name, e.g. refs/agency/...) exists.
func (r *Repo) refExists(ctx context.Context, ref string) (bool, error) {
	_, err := r.query(ctx, "show-ref", "--verify", "--quiet", "--", ref)
	if err != nil {
		if exitCode(err) == 1 {
			return false, nil
		}
		return false, err
	}
	return true, nil
}

// DeleteRefs deletes every ref under prefix (e.g. refs/agency/snapshots/<inv>/)
// in one transaction. Missing refs are not an error.
func (r *Repo) DeleteRefs(ctx context.Context, prefix string) error {
	refs, err := r.ForEachRef(ctx, prefix)
	if err != nil || len(refs) == 0 {
		return err
	}
	var b strings.Builder
	for _, ref := range refs {
		b.WriteString("delete " + ref.Name + "\x00\x00")
	}
	_, err = r.exec(ctx, r.Toplevel, nil, []byte(b.String()), "update-ref", "-z", "--stdin")
	return err
}

// RefsWithTrees lists refs under prefix with their commits' trees, in
// name order. It reads them from files when it can (refsWithTreesFromFiles):
// a checkpoint lists its invocation's snapshot refs every time.
func (r *Repo) RefsWithTrees(ctx context.Context, prefix string) ([]Ref, error) {
	if refs, ok := r.refsWithTreesFromFiles(prefix); ok {
		return refs, nil
	}

	out, err := r.query(ctx, "for-each-ref", "--format=%(refname)%00%(objectname)%00%(tree)", "--", prefix)
	if err != nil {
		return nil, err
	}

	var refs []Ref
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Split(line, "\x00")
		if len(f) == 3 {
			refs = append(refs, Ref{Name: f[0], Object: f[1], Tree: f[2]})
		}
	}

	return refs, nil
}

// TreeOf returns the tree id of a commit (or tree-ish).
func (r *Repo) TreeOf(ctx context.Context, rev string) (string, error) {
	out, err := r.query(ctx, "rev-parse", "-q", "--verify", "--end-of-options", rev+"^{tree}")
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}

// CommitInfo is the part of a commit the checkpoint listing needs.
type CommitInfo struct {
	Commit    string
	Tree      string
	Parents   []string
	Committed time.Time
}

// Commit reads a commit's tree, parents and committer time.
func (r *Repo) Commit(ctx context.Context, rev string) (*CommitInfo, error) {
	out, err := r.query(ctx, "show", "-s", "--format=%H%x00%T%x00%P%x00%ct", "--end-of-options", rev+"^{commit}")
	if err != nil {
		return nil, err
	}
	f := strings.Split(strings.TrimRight(string(out), "\n"), "\x00")
	if len(f) != 4 {
		return nil, errors.New("unexpected git show output")
	}
	sec, _ := strconv.ParseInt(f[3], 10, 64)
	return &CommitInfo{Commit: f[0], Tree: f[1], Parents: strings.Fields(f[2]), Committed: time.Unix(sec, 0).UTC()}, nil
}

// Shortstat is `git diff --shortstat`.
type Shortstat struct {
	Files, Insertions, Deletions int
}

// DiffShortstat compares two tree-ishes (from may be "" for the empty tree).
func (r *Repo) DiffShortstat(ctx context.Context, from, to string) (Shortstat, error) {
	if from == "" {
		from = emptyTree
	}
	out, err := r.query(ctx, "diff", "--no-ext-diff", "--no-renames", "--ignore-submodules=none", "--shortstat", from, to, "--")
	if err != nil {
		return Shortstat{}, err
	}
	return parseShortstat(string(out)), nil
}

// parseShortstat parses " 3 files changed, 42 insertions(+), 15 deletions(-)".
func parseShortstat(s string) Shortstat {
	var st Shortstat
	for _, part := range strings.Split(strings.TrimSpace(s), ",") {
		f := strings.Fields(part)
		if len(f) < 2 {
			continue
		}

		n, err := strconv.Atoi(f[0])
		if err != nil {
			continue
		}

		switch {
		case strings.HasPrefix(f[1], "file"):
			st.Files = n
		case strings.HasPrefix(f[1], "insertion"):
			st.Insertions = n
		case strings.HasPrefix(f[1], "deletion"):
			st.Deletions = n
		}
	}

	return st
}

// IgnoredDirs lists the directories git ignores in the tree (relative,
// without the trailing slash), from one `ls-files -o -i --directory`.
func (t *Tree) IgnoredDirs(ctx context.Context) ([]string, error) {
	out, err := t.query(ctx, "ls-files", "-z", "-o", "-i", "--exclude-standard", "--directory")
	if err != nil {
		return nil, err
	}
	var dirs []string
	for _, p := range strings.Split(string(out), "\x00") {
		if strings.HasSuffix(p, "/") {
			dirs = append(dirs, strings.TrimSuffix(p, "/"))
		}
	}
	return dirs, nil
}

// CheckIgnored returns which of paths (relative to the tree) git ignores,
// from one `git check-ignore --stdin -z`.
func (t *Tree) CheckIgnored(ctx context.Context, paths []string) (map[string]bool, error) {
	ignored := map[string]bool{}
	if len(paths) == 0 {
		return ignored, nil
	}

	in := strings.Join(paths, "\x00") + "\x00"
	out, err := t.exec(ctx, []string{"GIT_OPTIONAL_LOCKS=0"}, []byte(in), "check-ignore", "-z", "--stdin")
	if err != nil {
		if exitCode(err) == 1 {
			return ignored, nil
		}
		return nil, err
	}

	for _, p := range strings.Split(string(out), "\x00") {
		if p != "" {
			ignored[p] = true
		}
	}

	return ignored, nil
}

// IsDirtyQuick reports whether `git status --porcelain` prints anything
// (untracked files count only when untracked is set): whether a snapshot
// would hold anything, so submodules count as snapshotSubmodules says.
func (t *Tree) IsDirtyQuick(ctx context.Context, untracked bool) (bool, error) {
	mode := "--untracked-files=normal"
	if !untracked {
		mode = "--untracked-files=no"
	}
	out, err := t.query(ctx, "status", "--porcelain", "-z", mode, snapshotSubmodules)
	if err != nil {
		return false, err
	}
	return len(out) > 0, nil
}

// LiteralIgnorePattern is a gitignore pattern that matches exactly one
// path (relative to the root): anchored, its wildcards escaped.
func LiteralIgnorePattern(p string) string {
	var b strings.Builder
	b.WriteString("/")
	for _, r := range strings.Trim(p, "/") {
		if strings.ContainsRune(`*?[]\!# `, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// ResetHard runs `git reset --hard` (HEAD, index and tracked files).
func (t *Tree) ResetHard(ctx context.Context) error {
	_, err := t.run(ctx, "reset", "-q", "--hard")
	return err
}

// Clean removes untracked files and directories (`git clean -fd`), never
// ignored ones, nothing that matches the keep patterns (gitignore syntax,
// `-e`: kept as if ignored, and so is a directory that holds such a file),
// and never anything under the excluded paths.
func (t *Tree) Clean(ctx context.Context, keep []string, exclude ...string) error {
	args := []string{"clean", "-q", "-f", "-d"}
	for _, k := range keep {
		args = append(args, "-e", k)
	}
	args = append(args, "--", ".")
	for _, e := range exclude {
		args = append(args, ":(exclude,literal)"+strings.Trim(e, "/"))
	}
	_, err := t.run(ctx, args...)
	return err
}

// ReadTreeReset makes the index and the tracked files match treeish (`git
// read-tree --reset -u`): files absent from it are removed, the others
// written.
func (t *Tree) ReadTreeReset(ctx context.Context, treeish string) error {
	_, err := t.run(ctx, "read-tree", "--reset", "-u", treeish)
	return err
}

// ResetIndex resets the index to HEAD, keeping the files (`git reset -q`).
func (t *Tree) ResetIndex(ctx context.Context) error {
	_, err := t.run(ctx, "reset", "-q")
	return err
}

// HookPath is the executable hook name (`post-checkout`, …) git runs in
// this repository (core.hooksPath honoured), or "" when there is none.
func (r *Repo) HookPath(ctx context.Context, name string) string {
	out, err := r.query(ctx, "rev-parse", "--git-path", "hooks/"+name)
	if err != nil {
		return ""
	}

	p := strings.TrimSpace(string(out))
	if !filepath.IsAbs(p) {
		p = filepath.Join(r.Toplevel, p)
	}
	if fi, err := os.Stat(p); err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
		return ""
	}

	return p
}

// InProgress names the operation the tree is in the middle of ("merge",
// "cherry-pick", "revert", "rebase"), or "" for none: what `git status`
// reads, from the tree's git directory.
func (t *Tree) InProgress(ctx context.Context) string {
	for _, s := range []struct{ path, op string }{
		{"MERGE_HEAD", "merge"}, {"CHERRY_PICK_HEAD", "cherry-pick"}, {"REVERT_HEAD", "revert"},
		{"rebase-merge", "rebase"}, {"rebase-apply", "rebase"},
	} {
		out, err := t.query(ctx, "rev-parse", "--git-path", s.path)
		if err != nil {
			return ""
		}

		p := strings.TrimSpace(string(out))
		if !filepath.IsAbs(p) {
			p = filepath.Join(t.Path, p)
		}
		if _, err := os.Lstat(p); err == nil {
			return s.op
		}
	}

	return ""
}

// refsWithTreesFromFiles is RefsWithTrees from the ref files
// (repofiles.Refs) and the commits' loose objects (CommitFromFiles): the
// snapshot commits a checkpoint made stay loose until git packs them. ok
// is false when any of it is not there as files (ask git).
func (r *Repo) refsWithTreesFromFiles(prefix string) ([]Ref, bool) {
	ids, ok := repofiles.Refs(r.CommonDir, prefix)
	if !ok {
		return nil, false
	}

	refs := make([]Ref, 0, len(ids))
	for name, id := range ids {
		tree, _, ok := r.CommitFromFiles(id)
		if !ok {
			return nil, false
		}
		refs = append(refs, Ref{Name: name, Object: id, Tree: tree})
	}

	sort.Slice(refs, func(i, j int) bool { return refs[i].Name < refs[j].Name })
	return refs, true
}

// refsFromFiles is ForEachRef from the ref files (repofiles.Refs). git
// leaves out a ref whose object is missing; here each object must be a
// loose object file (a packed one is not looked for: ok false, ask git).
func (r *Repo) refsFromFiles(prefix string) ([]Ref, bool) {
	ids, ok := repofiles.Refs(r.CommonDir, prefix)
	if !ok {
		return nil, false
	}

	refs := make([]Ref, 0, len(ids))
	for name, id := range ids {
		fi, err := os.Stat(filepath.Join(r.CommonDir, "objects", id[:2], id[2:]))
		if err != nil || !fi.Mode().IsRegular() {
			return nil, false
		}
		refs = append(refs, Ref{Name: name, Object: id})
	}

	sort.Slice(refs, func(i, j int) bool { return refs[i].Name < refs[j].Name })
	return refs, true
}
