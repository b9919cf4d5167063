package gitcore

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"syscall"

	"github.com/git-agency/git-agency/gitcore/internal/configfile"
)

// Staging a few files (stageSmall) costs a `git update-index` on a
// checkpoint's way, after its status. Where staging a file is plainly
// hashing its bytes, it is done here instead, as git would: no
// gitattributes can apply to the path (so no filter, no ident, no
// working-tree-encoding, no text or eol), core.autocrlf is off (so no
// line ending is changed; core.eol only concerns files the attributes
// or autocrlf make text), core.fileMode and core.symlinks are on (so the
// mode is the file's own, not kept from its index entry), and the file is
// a regular one, small, or gone. Its blob is written as a loose object
// like the checkpoint's trees (objectwrite.go). Anything else (a symbolic
// link, a directory, a path under another listed path, a setting that
// changes a write) leaves the whole set to update-index.

// stageFromFiles is stageSmall without git: each path's tree entry, nil
// for one gone from the worktree. gitDir is the worktree's git directory.
// ok is false when a path or the configuration asks for git.
func (t *Tree) stageFromFiles(gitDir string, old map[string]TreeEntry, paths []string, oidLen int) (map[string]*TreeEntry, bool) {
	if !t.plainStaging(gitDir) || nestedPaths(paths) {
		return nil, false
	}

	seen := map[string]bool{}
	files := map[string]plainFile{}
	staged := make(map[string]*TreeEntry, len(paths))
	for _, p := range paths {
		f, gone, ok := t.plainFileAt(p, seen, oidLen)
		switch {
		case !ok:
			return nil, false
		case gone:
			staged[p] = nil
		default:
			files[p] = f
		}
	}

	// Written only once every path is known to be git's plain case.
	for p, f := range files {
		if prev, ok := old[p]; !ok || prev.OID != f.OID {
			if _, err := t.repo.writeLoose("blob", f.body, oidLen); err != nil {
				return nil, false
			}
		}
		staged[p] = &TreeEntry{Mode: f.Mode, OID: f.OID}
	}

	return staged, true
}

// plainFile is a file staged from its bytes: its entry and its bytes.
type plainFile struct {
	TreeEntry
	body []byte
}

// plainFileAt hashes the file p when staging it is plainly its bytes
// (gone: there is none); ok is false when that is not git's plain case.
// seen remembers the directories known to hold no .gitattributes.
func (t *Tree) plainFileAt(p string, seen map[string]bool, oidLen int) (f plainFile, gone, ok bool) {
	if path.Base(p) == ".gitattributes" || t.attributesOnWay(p, seen) {
		return f, false, false
	}

	fi, err := os.Lstat(filepath.Join(t.Path, filepath.FromSlash(p)))
	switch {
	case errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR):
		return f, true, true
	case err != nil || !fi.Mode().IsRegular() || fi.Size() > maxAsIs:
		return f, false, false
	}

	f.TreeEntry, f.body, ok = t.hashFile(p, oidLen)
	return f, false, ok
}

// plainStaging reports whether the repository's configuration leaves a
// file's bytes and mode as they are when git stages it, and objects may
// be written as loose files.
func (t *Tree) plainStaging(gitDir string) bool {
	if !t.repo.looseWritable() || t.attributesMayApply(gitDir) {
		return false
	}
	entries, ok := configfile.Files(gitDir, t.repo.CommonDir)
	if !ok {
		return false
	}
	cfg := NewConfig(entries)
	crlf, ok1 := cfg.Bool("core.autocrlf", false)
	mode, ok2 := cfg.Bool("core.filemode", true)
	links, ok3 := cfg.Bool("core.symlinks", true)
	return ok1 && ok2 && ok3 && !crlf && mode && links
}

// attributesOnWay reports whether a directory leading to p (the root
// included) holds a .gitattributes of any kind; seen remembers the
// directories already looked at without one.
func (t *Tree) attributesOnWay(p string, seen map[string]bool) bool {
	for d := path.Dir(p); !seen[d]; d = path.Dir(d) {
		if _, err := os.Lstat(filepath.Join(t.Path, filepath.FromSlash(d), ".gitattributes")); !os.IsNotExist(err) {
			return true
		}
		seen[d] = true
		if d == "." {
			break
		}
	}
	return false
}

// nestedPaths reports whether one path is under another: update-index
// settles such a pair in its own way (or refuses it).
func nestedPaths(paths []string) bool {
	set := make(map[string]bool, len(paths))
	for _, p := range paths {
		set[p] = true
	}
	for _, p := range paths {
		for d := path.Dir(p); d != "."; d = path.Dir(d) {
			if set[d] {
				return true
			}
		}
	}
	return false
}

// hashFile is the tree entry of the regular file p: the mode from its
// executable bit as git takes it, the id of its bytes as a blob; and the
// bytes. The tree is the agent's and changes while it is read: the file
// is opened beneath the tree's root (readSmallFileBeneath), so a
// directory on its way swapped for a link since the status cannot bring
// a file from elsewhere (a secret of the user's) into the object store,
// and its mode is the opened file's.
func (t *Tree) hashFile(p string, oidLen int) (TreeEntry, []byte, bool) {
	b, fi, ok := readSmallFileBeneath(t.Path, p, maxAsIs)
	if !ok {
		return TreeEntry{}, nil, false
	}
	mode := "100644"
	if fi.Mode().Perm()&0o100 != 0 {
		mode = "100755"
	}
	return TreeEntry{Mode: mode, OID: objectID("blob", b, oidLen)}, b, true
}

// stageFew stages the paths that a spliced snapshot (or an incremental
// one, snapshotTracked) hashes again: stageFromFiles where it can,
// stageSmall otherwise.
func (t *Tree) stageFew(ctx context.Context, gitDir string, old map[string]TreeEntry, paths []string, oidLen int) (map[string]*TreeEntry, error) {
	if staged, ok := t.stageFromFiles(gitDir, old, paths, oidLen); ok {
		return staged, nil
	}
	return t.stageSmall(ctx, gitDir, old, paths, oidLen)
}
