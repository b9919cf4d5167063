package wall

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// A walled agent's git-lfs keeps what its clean filter stores (a `git
// add` of a tracked file) in the shadow's own lfs/ directory, never in
// the repository's: git-lfs trusts its local store (a smudge copies an
// object into the tree without hashing it), so an agent that could write
// the repository's store could give every later checkout of a file, on
// any branch, its own content. importLFS brings the shadow's objects in,
// each only under its true SHA-256.

// importLFS copies each object of the shadow's Git LFS store that the
// repository's store (common/lfs) lacks into it, when its content hashes
// to its name; any other is left where it is. It reads the shadow through
// its own directories only (root), regular files only.
func importLFS(root *os.Root, common string) {
	objects := filepath.Join("lfs", "objects")
	if fi, err := root.Lstat(objects); err != nil || !fi.IsDir() {
		return
	}

	fs.WalkDir(root.FS(), filepath.ToSlash(objects), func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return nil
		}

		oid := d.Name()
		if len(oid) != 64 || !isHex(oid) || p != lfsObjectPath(oid) {
			return nil
		}

		dst := filepath.Join(common, filepath.FromSlash(p))
		if _, err := os.Lstat(dst); err == nil {
			return nil
		}

		importLFSObject(root, common, p, oid, dst)
		return nil
	})
}

// lfsObjectPath is where git-lfs stores the object oid, relative to its
// git directory, slash-separated.
func lfsObjectPath(oid string) string {
	return "lfs/objects/" + oid[:2] + "/" + oid[2:4] + "/" + oid
}

// importLFSObject copies the shadow's object at p into dst (a temporary
// file in the repository's lfs/tmp, renamed) when it hashes to oid.
func importLFSObject(root *os.Root, common, p, oid, dst string) {
	src, err := openShadowFile(root, filepath.FromSlash(p))
	if err != nil {
		return
	}
	defer src.Close()

	tmpDir := filepath.Join(common, "lfs", "tmp")
	if err := os.MkdirAll(tmpDir, 0o755); err != nil {
		return
	}
	tmp, err := os.CreateTemp(tmpDir, "agency-import-")
	if err != nil {
		return
	}
	defer os.Remove(tmp.Name())

	h := sha256.New()
	_, cerr := io.Copy(io.MultiWriter(tmp, h), src)
	if err := tmp.Close(); cerr != nil || err != nil {
		return
	}
	if hex.EncodeToString(h.Sum(nil)) != oid {
		return // not its content's name: never trusted
	}

	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return
	}
	os.Chmod(tmp.Name(), 0o644) // as git-lfs writes its objects
	os.Rename(tmp.Name(), dst)
}
