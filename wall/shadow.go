package wall

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/git-agency/git-agency/errs"
	"github.com/git-agency/git-agency/gitcore"
	"github.com/git-agency/git-agency/store"
)

// A walled agent's git works in a git directory of its own, the shadow:
// kept with its sandbox (<sandbox dir>/git) and mounted over the
// repository's common git directory inside the wall. It holds the
// agent's objects (the repository's store is a read-only alternate,
// mounted at base-objects), every ref the agent's git writes (seeded
// with a frozen copy of the repository's refs), their reflogs, and a
// copy of info/; the repository's config and hooks and the sandbox's
// worktree directory are mounted into it. Nothing the agent does there
// reaches the repository until ImportShadow, run outside the wall, hashes
// its objects again and moves the sandbox branch.

// ShadowDir is the shadow git directory of invocation inv's sandbox.
func ShadowDir(st *store.Store, inv string) string {
	return filepath.Join(st.SandboxDir(inv), "git")
}

// shadowBase is where the repository's object store is mounted inside the
// shadow; shadowAlternate is the shadow's alternates line naming it.
const (
	shadowBase      = "base-objects"
	shadowAlternate = "../" + shadowBase + "\n"
)

// shadowSkip are the refs the shadow is not seeded with: checkpoints and
// git-agency's own refs, the user's stash.
var shadowSkip = []string{"refs/agency/", "refs/stash"}

// PrepareShadow makes the shadow git directory of a sandbox before its
// wall goes up, or, when it exists, first imports what the agent left in
// it and then points the shadow's sandbox branch at the repository's (so
// a reset made outside, such as a checkpoint applied, is what the agent
// sees next). gitDir is the worktree directory of the tree the wall is
// for (the sandbox's, or a verify tree's), branch its branch ("" for
// none). It also makes the worktree's config.worktree, empty, when it is
// missing, so that the wall can keep it read-only.
func PrepareShadow(ctx context.Context, repo *gitcore.Repo, shadow, gitDir, branch string) error {
	cw := filepath.Join(gitDir, "config.worktree")
	if _, err := os.Lstat(cw); errors.Is(err, fs.ErrNotExist) {
		if err := os.WriteFile(cw, nil, 0o644); err != nil {
			return errs.WallFailed(fmt.Sprintf("cannot make %s: %v", cw, err))
		}
	}
	if fi, err := os.Lstat(shadow); err == nil && fi.IsDir() {
		return refreshShadow(ctx, repo, shadow, filepath.Base(gitDir), branch)
	}

	tmp := shadow + ".new"
	os.RemoveAll(tmp)

	if err := makeShadow(ctx, repo, tmp, filepath.Base(gitDir)); err != nil {
		os.RemoveAll(tmp)
		return errs.WallFailed(fmt.Sprintf("cannot make the sandbox's git directory: %v", err))
	}

	if err := os.Rename(tmp, shadow); err != nil {
		os.RemoveAll(tmp)
		return errs.IO("create", shadow, err)
	}

	if branch == "" {
		return nil
	}

	tip, err := branchTip(ctx, repo, branch)
	if err != nil {
		return err
	}

	return noteImported(shadow, tip)
}

// refreshShadow is PrepareShadow for a shadow that exists.
func refreshShadow(ctx context.Context, repo *gitcore.Repo, shadow, wtName, branch string) error {
	root, err := os.OpenRoot(shadow)
	if err != nil {
		return errs.IO("open", shadow, err)
	}

	err = root.MkdirAll(filepath.Join("worktrees", wtName), 0o755)
	root.Close()
	if err != nil {
		return errs.IO("create", filepath.Join(shadow, "worktrees", wtName), err)
	}
	if branch == "" {
		return nil
	}
	if _, err := ImportShadow(ctx, repo, shadow, branch); err != nil {
		return err
	}

	tip, err := branchTip(ctx, repo, branch)
	if err != nil {
		return err
	}
	if shadowAt(shadow, branch, tip) {
		return nil
	}
	if err := writeShadowRef(shadow, branch, tip); err != nil {
		return err
	}

	return noteImported(shadow, tip)
}

// branchTip is the commit the repository's branch points at, read from
// its ref files where they tell (a supervisor's wall, prepared just
// after its start prepared it, then runs no git), else from git.
func branchTip(ctx context.Context, repo *gitcore.Repo, branch string) (string, error) {
	ref := "refs/heads/" + branch
	if tips, ok := repo.RefTipsFromFiles(ref); ok && tips[ref] != "" {
		return tips[ref], nil
	}
	return repo.RevParse(ctx, ref)
}

// shadowAt reports whether the shadow's branch points at tip already and
// tip is the one last brought in or set (as the start left it):
// then refreshShadow has nothing to write.
func shadowAt(shadow, branch, tip string) bool {
	if lastImported(shadow) != tip {
		return false
	}

	root, err := os.OpenRoot(shadow)
	if err != nil {
		return false
	}
	defer root.Close()
	got, ok := shadowTip(root, branch)
	return ok && got == tip
}

// makeShadow lays out a new shadow git directory at dir.
func makeShadow(ctx context.Context, repo *gitcore.Repo, dir, wtName string) error {
	common := repo.CommonDir

	for _, d := range []string{"objects/info", "objects/pack", shadowBase, "refs/heads", "refs/tags", "logs", "hooks", "info", "worktrees/" + wtName} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			return err
		}
	}

	for _, d := range []string{"modules", "lfs", "rr-cache"} {
		if fi, err := os.Stat(filepath.Join(common, d)); err == nil && fi.IsDir() {
			if err := os.Mkdir(filepath.Join(dir, d), 0o755); err != nil {
				return err
			}
		}
	}

	seed, err := repo.RefSeed(ctx, shadowSkip...)
	if err != nil {
		return err
	}

	head, _ := os.ReadFile(filepath.Join(common, "HEAD"))
	files := map[string][]byte{
		"config": nil, "packed-refs": seed, "HEAD": head,
		"objects/info/alternates": []byte(shadowAlternates(repo.ObjectsDir())),
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			return err
		}
	}

	return copyRegularFiles(filepath.Join(common, "info"), filepath.Join(dir, "info"))
}

// shadowAlternates is the shadow's alternates file: the repository's
// store, then the stores it borrows from (a relative line of its own
// alternates file made absolute, since the store is mounted elsewhere).
func shadowAlternates(objects string) string {
	out := shadowAlternate
	b, err := os.ReadFile(filepath.Join(objects, "info", "alternates"))
	if err != nil {
		return out
	}

	for _, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if !filepath.IsAbs(line) {
			line = filepath.Join(objects, line)
		}

		out += line + "\n"
	}

	return out
}

// copyRegularFiles copies the regular files directly in src into dst.
func copyRegularFiles(src, dst string) error {
	entries, err := os.ReadDir(src)
	if err != nil {
		return nil
	}

	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}

		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			continue
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), b, 0o644); err != nil {
			return err
		}
	}

	return nil
}

// writeShadowRef points the shadow's loose ref of branch at tip, through
// the shadow's own directories only (an agent may have left links there).
func writeShadowRef(shadow, branch, tip string) error {
	root, err := os.OpenRoot(shadow)
	if err != nil {
		return errs.IO("open", shadow, err)
	}
	defer root.Close()
	name := filepath.Join("refs", "heads", filepath.FromSlash(branch))
	if err := root.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		return errs.IO("create", filepath.Join(shadow, filepath.Dir(name)), err)
	}

	tmp := name + ".agency-tmp"
	root.Remove(tmp)
	f, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o644)
	if err != nil {
		return errs.IO("write", filepath.Join(shadow, tmp), err)
	}

	_, werr := f.WriteString(tip + "\n")
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = root.Rename(tmp, name)
	}

	if werr != nil {
		root.Remove(tmp)
		return errs.IO("write", filepath.Join(shadow, name), werr)
	}

	return nil
}

// openShadowFile opens name inside the shadow for reading: never through
// a link out of it, never blocking on a FIFO, and only a regular file.
func openShadowFile(root *os.Root, name string) (*os.File, error) {
	f, err := root.OpenFile(name, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("%s is not a regular file", name)
	}
	return f, nil
}

// shadowTip is the commit the shadow's branch points at: its loose ref,
// else its line in the shadow's packed-refs; ok is false when it has
// neither (the agent deleted it) or what it has is no object id.
func shadowTip(root *os.Root, branch string) (string, bool) {
	ref := "refs/heads/" + branch
	if f, err := openShadowFile(root, filepath.FromSlash(ref)); err == nil {
		defer f.Close()
		b, _ := io.ReadAll(io.LimitReader(f, 256))
		id := strings.TrimSpace(string(b))
		return id, isObjectID(id)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return "", false
	}

	f, err := openShadowFile(root, "packed-refs")
	if err != nil {
		return "", false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if id, name, ok := strings.Cut(sc.Text(), " "); ok && name == ref {
			return id, isObjectID(id)
		}
	}

	return "", false
}

func isObjectID(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for _, c := range s {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// shadowAlternatesIntact reports whether the shadow's alternates file is
// still the regular file with the lines this program wrote: git reads it
// while importing, and must not be sent elsewhere (or to a FIFO).
func shadowAlternatesIntact(root *os.Root, objects string) bool {
	for _, d := range []string{"objects", filepath.Join("objects", "info")} {
		if fi, err := root.Lstat(d); err != nil || !fi.IsDir() {
			return false
		}
	}

	f, err := openShadowFile(root, filepath.Join("objects", "info", "alternates"))
	if err != nil {
		return false
	}
	defer f.Close()
	b, _ := io.ReadAll(io.LimitReader(f, 1<<16))
	return bytes.HasPrefix(b, []byte(shadowAlternate)) && string(b) == shadowAlternates(objects)
}
