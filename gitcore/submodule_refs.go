package gitcore

import (
	"bufio"
	"bytes"
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/git-agency/git-agency/gitcore/internal/repofiles"
)

// SubmoduleHead is the commit HEAD names in the submodule checked out at
// dir, read from its files: no git runs in a submodule, whose
// configuration may be an agent's (see statusSubmodules). "" when it is
// not checked out or its files do not say (a reftable repository, a
// symbolic ref of another kind).
func SubmoduleHead(dir string) string {
	gitDir, ok := submoduleGitDir(dir)
	if !ok {
		return ""
	}
	return gitDirHead(gitDir)
}

// gitCommonDir is the common directory of the git directory gitDir: what
// its commondir file names, else gitDir itself.
func gitCommonDir(gitDir string) string {
	c, ok := readRegular(filepath.Join(gitDir, "commondir"), 4096)
	if !ok {
		return gitDir
	}
	common := strings.TrimSpace(string(c))
	if !filepath.IsAbs(common) {
		common = filepath.Join(gitDir, common)
	}
	return common
}

// maxRemoteTips bounds the remote-tracking refs SubmodulePublished reads.
const maxRemoteTips = 10000

// remoteTips are the ids the remote-tracking refs of the repository whose
// common directory is common point at: its loose refs under refs/remotes
// (regular files only, never through a link) and its packed-refs lines.
func remoteTips(common string) []string {
	var tips []string
	root := filepath.Join(common, "refs", "remotes")
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || len(tips) >= maxRemoteTips {
			return filepath.SkipDir
		}
		if d.Type().IsRegular() {
			if b, ok := readRegular(p, 4096); ok {
				if id := repofiles.HexOID(strings.TrimSpace(string(b))); id != "" {
					tips = append(tips, id)
				}
			}
		}
		return nil
	})
	packed, _ := readRegular(filepath.Join(common, "packed-refs"), maxSubmoduleIndex)
	sc := bufio.NewScanner(bytes.NewReader(packed))
	for sc.Scan() && len(tips) < maxRemoteTips {
		if id, name, ok := strings.Cut(sc.Text(), " "); ok && strings.HasPrefix(name, "refs/remotes/") && repofiles.HexOID(id) != "" {
			tips = append(tips, id)
		}
	}
	return tips
}

// SubmodulePublished reports whether, in the submodule checked out at dir,
// commit is on a remote-tracking branch: it was pushed (or fetched), so it
// outlives this clone. No git runs in the submodule: its remote-tracking
// refs are read from its files, and the walk from them runs in this
// repository with the submodule's object store as an alternate (objects
// are data; the submodule's configuration, which may be an agent's, is
// never read).
func (r *Repo) SubmodulePublished(ctx context.Context, dir, commit string) bool {
	gitDir, ok := submoduleGitDir(dir)
	if !ok || repofiles.HexOID(commit) == "" {
		return false
	}
	common := gitCommonDir(gitDir)
	tips := remoteTips(common)
	if len(tips) == 0 {
		return false
	}
	if fi, err := os.Stat(filepath.Join(common, "objects")); err != nil || !fi.IsDir() {
		return false
	}
	in := commit + "\n^" + strings.Join(tips, "\n^") + "\n"
	env := []string{"GIT_OPTIONAL_LOCKS=0", "GIT_ALTERNATE_OBJECT_DIRECTORIES=" + filepath.Join(common, "objects")}
	out, err := r.exec(ctx, r.Toplevel, env, []byte(in), "rev-list", "--count", "--stdin")
	return err == nil && strings.TrimSpace(string(out)) == "0"
}
