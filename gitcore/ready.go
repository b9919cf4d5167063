package gitcore

import (
	"bytes"
	"context"
	"os"
	"strings"
)

// This file holds the git operations that make a new tree ready to work:
// listing the ignored files to copy into it (.worktreeinclude), sparse
// checkouts, and the local configuration of approved setups.

// includeCandidates lists what `.worktreeinclude` patterns may copy from the
// tree: matched are the untracked paths the patterns in patternsFile match
// (a whole directory as "dir/" when everything in it matches), ignored are
// the paths git ignores (`--exclude-standard --directory`). Both are
// relative to the tree's root; the caller intersects them (IncludePaths).
func (t *Tree) includeCandidates(ctx context.Context, patternsFile string) (matched, ignored []string, err error) {
	out, err := t.query(ctx, "ls-files", "-z", "-o", "-i", "--directory", "--exclude-from="+patternsFile)
	if err != nil {
		return nil, nil, err
	}
	matched = splitZ(out)
	out, err = t.query(ctx, "ls-files", "-z", "-o", "-i", "--directory", "--exclude-standard")
	if err != nil {
		return nil, nil, err
	}
	return matched, splitZ(out), nil
}

// Sparse is a tree's sparse-checkout state.
type Sparse struct {
	Enabled bool
	Cone    bool
	// Patterns are `git sparse-checkout list` lines: directories in cone
	// mode, gitignore-style patterns otherwise (as `set --stdin` takes them).
	Patterns []string
}

// SparseCheckout reads the tree's sparse-checkout state.
func (t *Tree) SparseCheckout(ctx context.Context) (Sparse, error) {
	on, err := t.configBool(ctx, "core.sparseCheckout")
	if err != nil || !on {
		return Sparse{}, err
	}

	cone, err := t.configBool(ctx, "core.sparseCheckoutCone")
	if err != nil {
		return Sparse{}, err
	}

	out, err := t.query(ctx, "sparse-checkout", "list")
	if err != nil {
		return Sparse{}, err
	}

	sp := Sparse{Enabled: true, Cone: cone}
	for _, l := range strings.Split(string(out), "\n") {
		if l != "" {
			sp.Patterns = append(sp.Patterns, l)
		}
	}

	return sp, nil
}

func (t *Tree) configBool(ctx context.Context, key string) (bool, error) {
	out, err := t.query(ctx, "config", "--type=bool", "--get", key)
	if err != nil {
		if exitCode(err) == 1 {
			return false, nil
		}
		return false, err
	}
	return strings.TrimSpace(string(out)) == "true", nil
}

// WorktreeAddNoCheckout runs `git worktree add --no-checkout -b branch path
// start`: the tree is registered and HEAD set, but no file is written yet.
func (r *Repo) WorktreeAddNoCheckout(ctx context.Context, path, branch, start string) error {
	_, err := r.run(ctx, "worktree", "add", "--quiet", "--no-checkout", "-b", branch, "--", path, start)
	return err
}

// WorktreeAddDetached registers a new worktree at path with a detached
// HEAD at start (a throwaway tree: no branch is made); checkout false
// leaves its files unwritten (sparse patterns are set first).
func (r *Repo) WorktreeAddDetached(ctx context.Context, path, start string, checkout bool) error {
	args := []string{"worktree", "add", "--quiet", "--detach"}
	if !checkout {
		args = append(args, "--no-checkout")
	}
	_, err := r.run(ctx, append(args, "--", path, start)...)
	return err
}

// SparseCheckoutSet sets the patterns of a new tree, made with
// --no-checkout, before its checkout (`git sparse-checkout set
// --cone|--no-cone --stdin`). In cone mode the tree gets a sparse index
// too (--sparse-index: index.sparse in its config.worktree): a directory
// outside the cone is one index entry, not one per file, so its checkout
// neither reads those trees nor writes their entries (at 100k files and a
// 1/20 cone, most of the time a new sandbox took).
func (t *Tree) SparseCheckoutSet(ctx context.Context, sp Sparse) error {
	args := []string{"sparse-checkout", "set", "--no-cone", "--stdin"}
	if sp.Cone {
		args = []string{"sparse-checkout", "set", "--cone", "--sparse-index", "--stdin"}
	}
	in := strings.Join(sp.Patterns, "\n") + "\n"
	_, err := t.exec(ctx, nil, []byte(in), args...)
	return err
}

// SparseCheckoutDisable turns sparse checkout off in the tree (`git
// worktree add` copies the patterns of the worktree it runs in).
func (t *Tree) SparseCheckoutDisable(ctx context.Context) error {
	_, err := t.run(ctx, "sparse-checkout", "disable")
	return err
}

// CheckoutHead writes HEAD's files into a tree made with --no-checkout,
// honouring its sparse-checkout patterns.
func (t *Tree) CheckoutHead(ctx context.Context) error {
	_, err := t.run(ctx, "checkout", "--quiet")
	return err
}

// LocalConfigValues returns every value of key in the repository's local
// configuration (`git config --local --get-all`); unset is no error.
func (r *Repo) LocalConfigValues(ctx context.Context, key string) ([]string, error) {
	out, err := r.query(ctx, "config", "--local", "-z", "--get-all", key)
	if err != nil {
		if exitCode(err) == 1 {
			return nil, nil
		}
		return nil, err
	}
	return splitZ(out), nil
}

// LocalConfigAdd adds a value to a multi-valued key in the repository's
// local configuration (`git config --local --add`).
func (r *Repo) LocalConfigAdd(ctx context.Context, key, value string) error {
	_, err := r.run(ctx, "config", "--local", "--add", key, value)
	return err
}

// tempPatterns writes patterns to a temporary file for --exclude-from.
func tempPatterns(patterns []string) (string, error) {
	f, err := os.CreateTemp("", "agency-include-*")
	if err != nil {
		return "", err
	}

	_, err = f.WriteString(strings.Join(patterns, "\n") + "\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}

	if err != nil {
		os.Remove(f.Name())
		return "", err
	}

	return f.Name(), nil
}

// IncludeCandidatesFor is includeCandidates for patterns held in memory.
func (t *Tree) IncludeCandidatesFor(ctx context.Context, patterns []string) (matched, ignored []string, err error) {
	file, err := tempPatterns(patterns)
	if err != nil {
		return nil, nil, err
	}
	defer os.Remove(file)
	return t.includeCandidates(ctx, file)
}

// SparseFile returns the content the index holds for rel (a path from the
// tree's top, slash-separated) when sparse-checkout left it out of the tree
// (its entry is skip-worktree); ok is false for any other path.
func (t *Tree) SparseFile(ctx context.Context, rel string) (data []byte, ok bool, err error) {
	out, err := t.query(ctx, "ls-files", "-t", "-z", "--", ":(literal)"+rel)
	if err != nil || !bytes.HasPrefix(out, []byte("S ")) {
		return nil, false, err
	}
	data, err = t.query(ctx, "cat-file", "blob", ":"+rel)
	if err != nil {
		return nil, false, err
	}
	return data, true, nil
}

// CommittedFile returns what commit rev holds at rel (a path from the
// tree's top, slash-separated): its content and whether it is a symlink
// (then data is the link's target). ok is false when rev has no file
// there.
func (t *Tree) CommittedFile(ctx context.Context, rev, rel string) (data []byte, symlink, ok bool, err error) {
	out, err := t.query(ctx, "ls-tree", "-z", rev, "--", ":(literal)"+rel)
	if err != nil {
		return nil, false, false, err
	}

	// "<mode> SP <type> SP <object> TAB <path> NUL"
	meta, _, found := bytes.Cut(out, []byte("\t"))
	f := strings.Fields(string(meta))
	if !found || len(f) != 3 || f[1] != "blob" {
		return nil, false, false, nil
	}

	data, err = t.query(ctx, "cat-file", "blob", f[2])
	if err != nil {
		return nil, false, false, err
	}

	return data, f[0] == "120000", true, nil
}

// CommittedPaths tells for each of rels (slash-separated, from the top)
// whether the commit rev holds it, of any type, in one `git ls-tree`: a
// caller about to read several files that are usually missing asks once.
func (t *Tree) CommittedPaths(ctx context.Context, rev string, rels ...string) (map[string]bool, error) {
	args := []string{"ls-tree", "-z", rev, "--"}
	for _, r := range rels {
		args = append(args, ":(literal)"+r)
	}

	out, err := t.query(ctx, args...)
	if err != nil {
		return nil, err
	}

	held := map[string]bool{}
	for _, r := range rels {
		held[r] = false
	}

	for _, rec := range bytes.Split(out, []byte{0}) {
		if _, p, ok := bytes.Cut(rec, []byte("\t")); ok {
			held[string(p)] = true
		}
	}

	return held, nil
}
