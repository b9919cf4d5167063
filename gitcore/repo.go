package gitcore

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"

	"github.com/git-agency/git-agency/errs"
	"github.com/git-agency/git-agency/gitcore/internal/configfile"
	"github.com/git-agency/git-agency/gitcore/internal/index"
	"github.com/git-agency/git-agency/gitcore/internal/repofiles"
)

// Repo is a non-bare repository discovered from a directory inside its main
// worktree or any linked worktree.
type Repo struct {
	runner CommandRunner
	// GitDir is the absolute git directory of the worktree we started in.
	GitDir string
	// CommonDir is the absolute common git directory (symlinks resolved):
	// the same for every worktree of the repository.
	CommonDir string
	// Toplevel is the root of the worktree we started in.
	Toplevel string
	// tips keeps RefTips' last answer (tipsmemo.go); nil: not kept.
	tips *tipsMemo
	// fromFiles: found from its files (discoverFromFiles), so its
	// configuration may be read from them too (configFiles).
	fromFiles bool
}

// Discover finds the repository containing dir. It respects what git
// exported to us (GIT_DIR and friends), refuses bare repositories and
// reports a directory outside any repository as E_NOT_A_REPO.
//
// Every command starts here, so the usual case (a work tree) is read from
// files (discoverFromFiles), and only what it leaves is asked of git.
func Discover(ctx context.Context, r CommandRunner, dir string) (*Repo, error) {
	if r == nil {
		r = ExecRunner{}
	}
	if repo, ok := discoverFromFiles(r, dir); ok {
		return repo, nil
	}
	return discoverWithGit(ctx, r, dir)
}

// discoverWithGit is Discover asking git.
func discoverWithGit(ctx context.Context, r CommandRunner, dir string) (*Repo, error) {
	// The usual case (a work tree) is one git process; a bare repository
	// or the inside of a .git directory, where --show-toplevel fails, is
	// told apart by the two calls below.
	if repo, ok := discoverWorkTree(ctx, r, dir); ok {
		return reachable(repo)
	}

	res, err := r.Run(ctx, Cmd{Dir: dir, Env: userEnv(),
		Args: []string{"rev-parse", "--is-bare-repository", "--absolute-git-dir", "--git-common-dir"}})
	if err != nil {
		if exitCode(err) == 128 {
			return nil, errs.NotARepo(dir)
		}
		return nil, err
	}

	lines := strings.Split(strings.TrimRight(string(res.Stdout), "\n"), "\n")
	if len(lines) != 3 {
		return nil, errs.Internal("unexpected rev-parse output %q", res.Stdout)
	}
	if lines[0] == "true" {
		return nil, errs.BareRepo(dir)
	}

	repo := newRepo(r, dir, lines[1], lines[2])
	res, err = r.Run(ctx, Cmd{Dir: dir, Env: userEnv(), Args: []string{"rev-parse", "--show-toplevel"}})
	if err != nil {
		// Inside the .git directory itself: there is no working tree here.
		return nil, errs.NotARepo(dir)
	}

	repo.Toplevel = strings.TrimRight(string(res.Stdout), "\n")
	return reachable(repo)
}

// reachable refuses a work tree without .git: it is reachable only
// through what git exported to us (GIT_DIR and GIT_WORK_TREE on a bare
// repository: the dotfiles layout; or core.worktree), and every call in a
// tree of ours scrubs those variables, so none would find the repository.
func reachable(repo *Repo) (*Repo, error) {
	if _, err := os.Lstat(filepath.Join(repo.Toplevel, ".git")); err != nil {
		return nil, errs.NoMainWorktree(repo.GitDir)
	}
	return repo, nil
}

// discoverWorkTree is Discover in one `git rev-parse` when dir is in a
// work tree; ok is false otherwise (and for any doubt).
func discoverWorkTree(ctx context.Context, r CommandRunner, dir string) (*Repo, bool) {
	res, err := r.Run(ctx, Cmd{Dir: dir, Env: userEnv(),
		Args: []string{"rev-parse", "--is-bare-repository", "--absolute-git-dir", "--git-common-dir", "--show-toplevel"}})
	if err != nil {
		return nil, false
	}

	lines := strings.Split(strings.TrimRight(string(res.Stdout), "\n"), "\n")
	if len(lines) != 4 || lines[0] != "false" || lines[3] == "" {
		return nil, false
	}

	repo := newRepo(r, dir, lines[1], lines[2])
	repo.Toplevel = lines[3]
	return repo, true
}

// newRepo is a Repo of gitDir whose common directory rev-parse gave as
// common (relative to dir when not absolute; symlinks resolved).
func newRepo(r CommandRunner, dir, gitDir, common string) *Repo {
	repo := &Repo{runner: r, GitDir: gitDir, tips: &tipsMemo{}}

	if !filepath.IsAbs(common) {
		// Relative to dir as git sees it: its path with symlinks resolved
		// (a lexical join would take "../.." through a symlink wrong).
		if real, err := filepath.EvalSymlinks(dir); err == nil {
			dir = real
		}
		common = filepath.Join(dir, common)
	}

	if resolved, err := filepath.EvalSymlinks(common); err == nil {
		common = resolved
	}

	repo.CommonDir = filepath.Clean(common)
	return repo
}

// Locate is the package-level locate run with this repository's
// CommandRunner: it looks at dir only, whatever repository dir is in.
func (r *Repo) Locate(ctx context.Context, dir string) (Location, bool, error) {
	return locate(ctx, r.runner, dir)
}

// query runs a read-only git command in the repository (at the worktree we
// started in) and returns stdout.
func (r *Repo) query(ctx context.Context, args ...string) ([]byte, error) {
	return r.exec(ctx, r.Toplevel, []string{"GIT_OPTIONAL_LOCKS=0"}, nil, args...)
}

// run runs a mutating git command in the repository.
func (r *Repo) run(ctx context.Context, args ...string) ([]byte, error) {
	return r.exec(ctx, r.Toplevel, nil, nil, args...)
}

// exec pins git to this repository explicitly (--git-dir), so what git
// exported to us never leaks into a call and a user's GIT_DIR still works.
func (r *Repo) exec(ctx context.Context, dir string, extra []string, stdin []byte, args ...string) ([]byte, error) {
	full := append([]string{"--git-dir=" + r.GitDir}, args...)
	c := Cmd{Dir: dir, Args: full, Pin: pinned, Env: cleanEnv(os.Environ(), extra...)}
	if stdin != nil {
		c.Stdin = bytes.NewReader(stdin)
	}
	res, err := r.runner.Run(ctx, c)
	return res.Stdout, err
}

// pinned is the user configuration every internal call overrides, because
// it changes what git-agency reads or does behind its back:
//   - log.showSignature makes `log` and `show` print the signature check
//     before each commit, into output parsed as commit ids and fields;
//   - submodule.recurse makes `checkout`, `reset`, `read-tree` and
//     `worktree add` recurse into submodules, which fails on a submodule
//     that is not checked out (a sparse tree, a sandbox), and may fail
//     after the superproject already moved;
//   - diff.external and color.* are not listed: every diff that is parsed
//     passes --no-ext-diff and no color is asked of a parsed format.
//
// What the user means is not pinned: signing of the commits land writes
// (commit-tree -S when commit.gpgsign asks), their hooks.
var pinned = []string{"log.showSignature=false", "submodule.recurse=false"}

// treePinned is pinned for the calls run in a tree (Tree), plus
// core.fsmonitor=false: a sandbox's agent can have set a fsmonitor
// program for its worktree (config.worktree, under
// extensions.worktreeConfig), which git would run as the user, outside
// any wall, on every status. The wall keeps that file read-only too.
var treePinned = append(append([]string(nil), pinned...), "core.fsmonitor=false")

// Tree returns a handle for git commands run inside the worktree at path (an
// integration or sandbox tree).
func (r *Repo) Tree(path string) *Tree { return &Tree{repo: r, Path: path} }

// Tree is one worktree of the repository, addressed by its directory. Calls
// strip git's repository-pinning variables and run with `-C path`.
type Tree struct {
	repo *Repo
	Path string
}

func (t *Tree) exec(ctx context.Context, extra []string, stdin []byte, args ...string) ([]byte, error) {
	c := Cmd{Dir: t.Path, Args: args, Pin: treePinned, Env: cleanEnv(os.Environ(), extra...)}
	if stdin != nil {
		c.Stdin = bytes.NewReader(stdin)
	}
	res, err := t.repo.runner.Run(ctx, c)
	return res.Stdout, err
}

// query runs a read-only git command in the tree.
func (t *Tree) query(ctx context.Context, args ...string) ([]byte, error) {
	return t.exec(ctx, []string{"GIT_OPTIONAL_LOCKS=0"}, nil, args...)
}

// run runs a mutating git command in the tree.
func (t *Tree) run(ctx context.Context, args ...string) ([]byte, error) {
	return t.exec(ctx, nil, nil, args...)
}

// runEnv runs a git command in the tree with extra environment (for example
// GIT_INDEX_FILE for a temporary index).
func (t *Tree) runEnv(ctx context.Context, env []string, stdin []byte, args ...string) ([]byte, error) {
	return t.exec(ctx, env, stdin, args...)
}

// CurrentBranch returns the short name of the branch checked out in the
// tree, or "" when HEAD is detached.
func (t *Tree) CurrentBranch(ctx context.Context) (string, error) {
	out, err := t.query(ctx, "symbolic-ref", "-q", "--short", "HEAD")
	if err != nil {
		if exitCode(err) == 1 {
			return "", nil
		}
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}

// Head returns the commit HEAD points at in the tree ("" on an unborn branch).
func (t *Tree) Head(ctx context.Context) (string, error) {
	out, err := t.query(ctx, "rev-parse", "-q", "--verify", "HEAD^{commit}")
	if err != nil {
		if exitCode(err) == 1 {
			return "", nil
		}
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}

// Status returns the tree's porcelain v2 status (untracked files listed,
// ignored ones not).
func (t *Tree) Status(ctx context.Context) ([]StatusEntry, error) {
	return t.status(ctx, "--untracked-files=all")
}

// status is the tree's status, submodules as --ignore-submodules=none
// shows them; but no git looks inside one (see statusSubmodules).
func (t *Tree) status(ctx context.Context, untracked string) ([]StatusEntry, error) {
	out, err := t.query(ctx, "status", "--porcelain=v2", "-z", untracked, statusSubmodules)
	if err != nil {
		return nil, err
	}
	st, err := parseStatusV2(out)
	if err != nil {
		return nil, err
	}
	return t.withSubmoduleDirt(st, untracked != "--untracked-files=no", nil), nil
}

// HasTrackedChanges reports whether the tree has staged or unstaged changes
// to tracked files (untracked files do not count).
// Untracked files are not looked for at all (`--untracked-files=no`): in a
// large tree that walk is most of what a full status costs.
// A submodule counts when its commit or its index entry changed, not for
// the files inside it (OnlySubmoduleDirt): those are the submodule's own,
// and no checkout, reset or read-tree of this tree touches them (they
// never recurse into submodules).
//
// A clean answer is remembered for TrackedUnchanged (racyclean.go): the
// racily clean entries it would otherwise hash again, or leave to
// another status.
func (t *Tree) HasTrackedChanges(ctx context.Context) (bool, error) {
	var proof *racyProof
	if gitDir, ok := repofiles.WorktreeGitDir(t.Path); ok {
		proof = beginRacyProof(gitDir, index.StampOf(filepath.Join(gitDir, "index")))
	}
	dirty, err := t.hasTrackedChanges(ctx)
	proof.end(err == nil && !dirty)
	return dirty, err
}

func (t *Tree) hasTrackedChanges(ctx context.Context) (bool, error) {
	st, err := t.status(ctx, "--untracked-files=no")
	if err != nil {
		return false, err
	}
	for _, e := range st {
		if e.Kind != StatusUntracked && e.Kind != StatusIgnored && !OnlySubmoduleDirt(e) {
			return true, nil
		}
	}
	return false, nil
}

// HasTrackedOrSubmoduleChanges is HasTrackedChanges, except that a
// submodule with changed files inside it counts too: those go with the
// tree when it is removed, and no snapshot of it holds them.
func (t *Tree) HasTrackedOrSubmoduleChanges(ctx context.Context) (bool, error) {
	st, err := t.status(ctx, "--untracked-files=no")
	if err != nil {
		return false, err
	}
	for _, e := range st {
		if e.Kind != StatusUntracked && e.Kind != StatusIgnored {
			return true, nil
		}
	}
	return false, nil
}

// Changes is the tree's status as IsDirty reads it: untracked directories
// as one entry each, ignored files not listed.
func (t *Tree) Changes(ctx context.Context) ([]StatusEntry, error) {
	return t.status(ctx, "--untracked-files=normal")
}

// IsDirty reports whether the tree has any change, untracked files included.
// An untracked directory counts as one entry (`--untracked-files=normal`):
// whether anything is untracked needs no list of every file inside it.
func (t *Tree) IsDirty(ctx context.Context) (bool, error) {
	st, err := t.status(ctx, "--untracked-files=normal")
	if err != nil {
		return false, err
	}
	for _, e := range st {
		if e.Kind != StatusIgnored {
			return true, nil
		}
	}
	return false, nil
}

// HoldsWork is IsDirty, except that untracked files of ours in the
// directory ours (relative to the tree's top, e.g. ".agency") do not
// count: isOurs tells their names (a marker, a .gitignore, the temp files
// of their writes). A tree whose only change is those holds no one's
// work. Any change to a tracked file there, and any other untracked file
// or directory there, still counts.
func (t *Tree) HoldsWork(ctx context.Context, ours string, isOurs func(name string) bool) (bool, error) {
	st, err := t.status(ctx, "--untracked-files=normal")
	if err != nil {
		return false, err
	}
	for _, e := range st {
		if e.Kind == StatusIgnored || (e.Kind == StatusUntracked && t.onlyOurs(e.Path, ours, isOurs)) {
			continue
		}
		return true, nil
	}
	return false, nil
}

// onlyOurs reports whether the untracked status path p is the directory
// ours holding only files isOurs names, or one such file in it.
func (t *Tree) onlyOurs(p, ours string, isOurs func(string) bool) bool {
	if p == ours+"/" {
		ents, err := os.ReadDir(filepath.Join(t.Path, filepath.FromSlash(ours)))
		if err != nil {
			return false
		}

		for _, e := range ents {
			if !e.Type().IsRegular() || !isOurs(e.Name()) {
				return false
			}
		}

		return true
	}

	name, ok := strings.CutPrefix(p, ours+"/")
	return ok && !strings.Contains(name, "/") && isOurs(name)
}

// RevParse resolves rev to a commit id.
func (r *Repo) RevParse(ctx context.Context, rev string) (string, error) {
	out, err := r.query(ctx, "rev-parse", "-q", "--verify", "--end-of-options", rev+"^{commit}")
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}

// BranchExists reports whether refs/heads/<name> exists.
func (r *Repo) BranchExists(ctx context.Context, name string) (bool, error) {
	return r.refExists(ctx, "refs/heads/"+name)
}

// WorktreeAdd runs `git worktree add -b branch path start`. A cancelled
// ctx interrupts git and its checkout as Ctrl-C would (Cmd.Group): git
// takes back the half-written tree; the branch stays for the caller.
func (r *Repo) WorktreeAdd(ctx context.Context, path, branch, start string) error {
	c := Cmd{Dir: r.Toplevel, Pin: pinned, Env: cleanEnv(os.Environ()), Group: true,
		Args: []string{"--git-dir=" + r.GitDir, "worktree", "add", "--quiet", "-b", branch, "--", path, start}}
	_, err := r.runner.Run(ctx, c)
	return err
}

// WorktreeAddExisting checks out an existing branch in a new worktree.
func (r *Repo) WorktreeAddExisting(ctx context.Context, path, branch string) error {
	_, err := r.run(ctx, "worktree", "add", "--quiet", "--", path, branch)
	return err
}

// WorktreeAddExistingNoCheckout registers an existing branch in a new
// worktree without writing its files (sparse patterns are set first).
func (r *Repo) WorktreeAddExistingNoCheckout(ctx context.Context, path, branch string) error {
	_, err := r.run(ctx, "worktree", "add", "--quiet", "--no-checkout", "--", path, branch)
	return err
}

// WorktreeRemove runs `git worktree remove [--force] path`.
func (r *Repo) WorktreeRemove(ctx context.Context, path string, force bool) error {
	args := []string{"worktree", "remove"}
	if force {
		// Twice: also removes a locked worktree.
		args = append(args, "--force", "--force")
	}
	_, err := r.run(ctx, append(args, "--", path)...)
	return err
}

// Worktrees lists the registered worktrees.
func (r *Repo) Worktrees(ctx context.Context) ([]Worktree, error) {
	out, err := r.query(ctx, "worktree", "list", "--porcelain", "-z")
	if err != nil {
		return nil, err
	}
	return parseWorktreeList(out), nil
}

// DeleteBranch deletes a local branch (-D when force).
func (r *Repo) DeleteBranch(ctx context.Context, name string, force bool) error {
	flag := "-d"
	if force {
		flag = "-D"
	}
	_, err := r.run(ctx, "branch", flag, "--", name)
	return err
}

// UpdateRef points ref at commit.
func (r *Repo) UpdateRef(ctx context.Context, ref, commit string) error {
	_, err := r.run(ctx, "update-ref", ref, commit)
	return err
}

// DeleteRef deletes ref.
func (r *Repo) DeleteRef(ctx context.Context, ref string) error {
	_, err := r.run(ctx, "update-ref", "-d", ref)
	return err
}

// Ref is one line of for-each-ref.
type Ref struct {
	Name   string
	Object string
	// Tree is the commit's tree (RefsWithTrees only).
	Tree string
}

// ForEachRef lists refs under prefix, in name order: from the ref files
// when each names a loose object (refsFromFiles), else by asking git.
func (r *Repo) ForEachRef(ctx context.Context, prefix string) ([]Ref, error) {
	if refs, ok := r.refsFromFiles(prefix); ok {
		return refs, nil
	}

	out, err := r.query(ctx, "for-each-ref", "--format=%(refname)%00%(objectname)", "--", prefix)
	if err != nil {
		return nil, err
	}

	var refs []Ref
	for _, line := range strings.Split(string(out), "\n") {
		name, obj, ok := strings.Cut(line, "\x00")
		if ok {
			refs = append(refs, Ref{Name: name, Object: obj})
		}
	}

	return refs, nil
}

// Config returns every agency.* configuration entry, rerere.enabled (a
// walled agent's commit needs what git makes for it) and
// core.sparseCheckout (whether the tree we run in is sparse, asked by
// every create and start), in order, keys lower case as git prints them.
// Missing configuration is not an error.
func (r *Repo) Config(ctx context.Context) ([]ConfigEntry, error) {
	if r.fromFiles {
		if all, ok := configfile.Files(r.GitDir, r.CommonDir); ok {
			return agencyEntries(all), nil
		}
	}

	out, err := r.query(ctx, "config", "-z", "--get-regexp", `^agency\.|^rerere\.enabled$|^core\.sparsecheckout$`)
	if err != nil {
		if exitCode(err) == 1 {
			return nil, nil
		}
		return nil, err
	}

	return parseConfigZ(out), nil
}

// agencyEntries are the entries of all Config returns: `git config
// --get-regexp '^agency\.|^rerere\.enabled$|^core\.sparsecheckout$'`
// matches the key as git names it (section and variable lower case).
func agencyEntries(all []ConfigEntry) []ConfigEntry {
	var out []ConfigEntry
	for _, e := range all {
		if strings.HasPrefix(e.Key, "agency.") || e.Key == "rerere.enabled" || e.Key == "core.sparsecheckout" {
			out = append(out, e)
		}
	}
	return out
}

// Version returns git's version string ("2.39.5").
func Version(ctx context.Context, r CommandRunner) (string, error) {
	if r == nil {
		r = ExecRunner{}
	}

	res, err := r.Run(ctx, Cmd{Args: []string{"version"}, Env: cleanEnv(os.Environ())})
	if err != nil {
		return "", err
	}

	v := strings.TrimSpace(string(res.Stdout))
	v = strings.TrimPrefix(v, "git version ")
	if f := strings.Fields(v); len(f) > 0 {
		v = f[0]
	}

	return v, nil
}

// Unreachable returns which of commits are reachable from no ref (a branch,
// a tag, a snapshot ref, …; HEADs of worktrees do not count), from one
// reachability walk for all of them: `git rev-list <commits> --not
// --glob=refs/*` lists exactly the commits that only they reach, so a
// commit is unreachable when it is listed itself. (One `for-each-ref
// --contains` per commit walks the history once per commit.)
func (r *Repo) Unreachable(ctx context.Context, commits []string) (map[string]bool, error) {
	out := map[string]bool{}
	if len(commits) == 0 {
		return out, nil
	}

	want := map[string]bool{}
	args := []string{"rev-list"}
	for _, c := range commits {
		if !want[c] {
			want[c] = true
			args = append(args, c)
		}
	}

	res, err := r.query(ctx, append(args, "--not", "--glob=refs/*")...)
	if err != nil {
		return nil, err
	}

	for _, line := range strings.Split(string(res), "\n") {
		if want[line] {
			out[line] = true
		}
	}

	return out, nil
}

// WorktreeRepair runs `git worktree repair -- paths…`: after the repository
// moved, each listed linked worktree's .git file is pointed at the new
// git directory again (and its admin entry at the tree).
func (r *Repo) WorktreeRepair(ctx context.Context, paths []string) error {
	if len(paths) == 0 {
		return nil
	}
	_, err := r.run(ctx, append([]string{"worktree", "repair", "--"}, paths...)...)
	return err
}
