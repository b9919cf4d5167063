package wall

import "path/filepath"

// shadowGrants are the git files of a walled agent: its shadow git
// directory (ShadowDir) mounted writable over the repository's common git
// directory, so every object and ref its git writes stays there; the
// repository's object store read-only inside it as its alternate; the
// repository's config, hooks and submodules read-only; the sandbox's
// worktree directory (index, HEAD) writable but for the files that say
// where the repository is, and for config.worktree, which always exists
// by then (PrepareShadow makes it) and so is always read-only. The
// shadow's object directory, its info/ and its alternates file are
// mounts of their own: the agent cannot rename them away or replace the
// alternates file. The repository's Git LFS store is not among them:
// git-lfs trusts its local store, so the agent's git-lfs writes the
// shadow's own lfs/, brought in hashed (importLFS).
func (w *Wall) shadowGrants(add func(p, from string, a Access, why string)) {
	common, s := realPath(w.CommonDir), w.Shadow
	in := func(rel string) string { return filepath.Join(common, rel) }
	add(common, s, Writable, "the sandbox's own git directory")
	add(in("objects"), filepath.Join(s, "objects"), Writable, "the sandbox's own object store")
	add(in("objects/info"), filepath.Join(s, "objects", "info"), Writable, "the sandbox's own object store")
	add(in("objects/info/alternates"), filepath.Join(s, "objects", "info", "alternates"), ReadOnly, "the sandbox's alternate: the repository's object store")
	add(in(shadowBase), filepath.Join(common, "objects"), ReadOnly, "the repository's object store")

	for _, name := range []string{"config", "hooks", "modules"} {
		add(in(name), filepath.Join(common, name), ReadOnly, "repository")
	}

	wt := in(filepath.Join("worktrees", filepath.Base(w.GitDir)))
	add(wt, w.GitDir, Writable, "worktree git directory")

	for _, name := range []string{"commondir", "gitdir", "config.worktree"} {
		add(filepath.Join(wt, name), filepath.Join(w.GitDir, name), ReadOnly, "worktree git directory's links and config")
	}
}
