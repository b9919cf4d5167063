package wall

import (
	"bufio"
	"context"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"

	"github.com/git-agency/git-agency/errs"
	"github.com/git-agency/git-agency/gitcore"
	"github.com/git-agency/git-agency/store"
)

// keptBranchPrefix is where the branches a walled agent made (or moved)
// in its shadow, other than its sandbox branch, are kept in the
// repository: refs/agency/kept/<inv>/heads/<name>, beside what discard
// keeps (gc removes them with the invocation, keeping those on no branch
// unless forced).
func keptBranchPrefix(inv string) string { return store.KeptRefPrefix(inv) + "heads/" }

// KeepShadowBranches runs once a walled agent's turn is over. Every
// branch of the shadow but the sandbox branch that the agent's git made
// or moved (its tip is not the repository's branch of that name) is kept
// under keptBranchPrefix, its objects brought in first (ImportShadow); the
// agent still has them in its shadow. And when the sandbox tree's HEAD
// (gitDir/HEAD, shared with the wall) names any branch but the sandbox
// branch, which the repository lacks or which the agent's commits did not
// move there, HEAD is detached at that branch's tip in the shadow: it is
// then valid in the repository, the tree matches it, and land says its
// commits are off the sandbox branch (discard keeps them too). A HEAD on
// a branch with no commit goes back to the sandbox branch. When there is
// nothing to keep and HEAD is on the sandbox branch, it runs no git.
func KeepShadowBranches(ctx context.Context, repo *gitcore.Repo, shadow, gitDir, branch, inv string) error {
	root, err := os.OpenRoot(shadow)
	if err != nil {
		return nil // unwalled, or no shadow yet: nothing to keep
	}

	tips := shadowBranches(root)
	root.Close()
	theirs, err := refMap(ctx, repo, "refs/heads/")
	if err != nil {
		return err
	}

	kept, err := refMap(ctx, repo, keptBranchPrefix(inv))
	if err != nil {
		return err
	}

	todo := branchesToKeep(tips, theirs, kept, branch)
	head, off := offBranchHead(gitDir, branch)
	if len(todo) == 0 && !off {
		return nil
	}
	if _, err := ImportShadow(ctx, repo, shadow, branch); err != nil {
		return err
	}

	base := theirs[branch]
	for _, name := range todo {
		if repo.Connected(ctx, tips[name], base) != nil {
			continue // not (all) brought in: nothing to point at
		}
		if err := repo.UpdateRef(ctx, keptBranchPrefix(inv)+name, tips[name]); err != nil {
			return err
		}
	}

	if !off {
		return nil
	}

	return detachHead(ctx, repo, gitDir, head, branch, base, tips)
}

// branchesToKeep are the shadow's branches (tips) but the sandbox branch
// whose tip is neither the repository's branch of that name (theirs) nor
// kept already.
func branchesToKeep(tips, theirs, kept map[string]string, branch string) []string {
	var todo []string
	for name, tip := range tips {
		if name != branch && isObjectID(tip) && theirs[name] != tip && kept[name] != tip {
			todo = append(todo, name)
		}
	}
	sort.Strings(todo)
	return todo
}

// detachHead points the sandbox tree's HEAD (head, off its branch) at the
// tip of the branch it names, or back at the sandbox branch when that has
// no commit here.
func detachHead(ctx context.Context, repo *gitcore.Repo, gitDir, head, branch, base string, tips map[string]string) error {
	want := "ref: refs/heads/" + branch
	if name, ok := strings.CutPrefix(head, "ref: refs/heads/"); ok && isObjectID(tips[name]) && repo.Connected(ctx, tips[name], base) == nil {
		want = tips[name]
	}
	return writeGitDirFile(gitDir, "HEAD", want+"\n")
}

// refMap is the refs under prefix, by name without it, to their objects.
func refMap(ctx context.Context, repo *gitcore.Repo, prefix string) (map[string]string, error) {
	refs, err := repo.ForEachRef(ctx, prefix)
	out := map[string]string{}
	for _, r := range refs {
		out[strings.TrimPrefix(r.Name, prefix)] = r.Object
	}
	return out, err
}

// offBranchHead is the sandbox tree's HEAD (gitDir/HEAD, read as a
// regular file, never through a link) and whether it is a symbolic ref
// to anything but the sandbox branch.
func offBranchHead(gitDir, branch string) (string, bool) {
	root, err := os.OpenRoot(gitDir)
	if err != nil {
		return "", false
	}
	defer root.Close()
	f, err := openShadowFile(root, "HEAD")
	if err != nil {
		return "", false
	}

	b, _ := io.ReadAll(io.LimitReader(f, 4096))
	f.Close()
	head := strings.TrimSpace(string(b))
	return head, !isObjectID(head) && head != "ref: refs/heads/"+branch
}

// shadowBranches are the shadow's branches (name without refs/heads/, to
// tip): its packed-refs, then its loose refs over them, read through the
// shadow's own directories only, regular files only.
func shadowBranches(root *os.Root) map[string]string {
	tips := map[string]string{}
	if f, err := openShadowFile(root, "packed-refs"); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if id, ref, ok := strings.Cut(sc.Text(), " "); ok {
				if name, ok := strings.CutPrefix(ref, "refs/heads/"); ok {
					tips[name] = id
				}
			}
		}

		f.Close()
	}

	fs.WalkDir(root.FS(), "refs/heads", func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() || strings.HasSuffix(p, ".lock") {
			return nil
		}
		f, err := openShadowFile(root, filepath.FromSlash(p))
		if err != nil {
			return nil
		}
		b, _ := io.ReadAll(io.LimitReader(f, 256))
		f.Close()
		tips[strings.TrimPrefix(p, "refs/heads/")] = strings.TrimSpace(string(b))
		return nil
	})
	return tips
}

// writeGitDirFile replaces name in dir with data (a file beside it, then
// a rename), never through a link.
func writeGitDirFile(dir, name, data string) error {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return errs.IO("open", dir, err)
	}
	defer root.Close()
	tmp := name + ".agency-tmp"
	root.Remove(tmp)
	f, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o644)
	if err != nil {
		return errs.IO("write", tmp, err)
	}

	_, werr := f.WriteString(data)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = root.Rename(tmp, name)
	}

	if werr != nil {
		root.Remove(tmp)
		return errs.IO("write", name, werr)
	}

	return nil
}
