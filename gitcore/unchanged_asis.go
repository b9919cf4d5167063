package gitcore

import (
	"bytes"
	"crypto/sha1"
	"crypto/sha256"
	"fmt"
	"hash"
	"os"
	"path"
	"path/filepath"

	"github.com/git-agency/git-agency/gitcore/internal/configfile"
	"github.com/git-agency/git-agency/gitcore/internal/repofiles"
)

// The files TrackedUnchanged doubts (racily clean: written in the second
// the index was, as right after a commit) are compared with their entries
// by `git hash-object`, which stages them through the tree's attributes
// and filters. Where no gitattributes can apply to a file, git stages it
// as it is, but for core.autocrlf, which leaves a file whose bytes are its
// blob's as they are: a file whose bytes hash to its entry's id is then
// unchanged for git too, and needs no process. A file whose bytes differ
// is still left to git (autocrlf may make them the blob).

// maxAsIs bounds the size of a file compared in process.
const maxAsIs = 1 << 20

// settleAsIs returns the entries of doubt it could not prove unchanged by
// hashing their files' bytes: all of them when an attributes file may
// apply (attributesMayApply) or a directory leading to one holds a
// .gitattributes; each symbolic link, large file, or file whose bytes
// are not its blob's.
func (t *Tree) settleAsIs(gitDir string, oidLen int, doubt []statEntry) []statEntry {
	if len(doubt) == 0 || t.attributesMayApply(gitDir) {
		return doubt
	}

	seen := map[string]bool{}
	var left []statEntry
	for _, e := range doubt {
		for d := path.Dir(e.path); !seen[d]; d = path.Dir(d) {
			seen[d] = true
			if _, err := os.Lstat(filepath.Join(t.Path, filepath.FromSlash(d), ".gitattributes")); !os.IsNotExist(err) {
				return doubt
			}
			if d == "." {
				break
			}
		}

		if e.mode&0o170000 != 0o100000 || e.size > maxAsIs || !blobIs(filepath.Join(t.Path, filepath.FromSlash(e.path)), oidLen, e.oid) {
			left = append(left, e)
		}
	}

	return left
}

// attributesMayApply reports whether a gitattributes file outside the
// tree may apply to its files, or this cannot be told from files: the
// repository's info/attributes, core.attributesFile or the global default
// ($XDG_CONFIG_HOME/git/attributes), the system file (git's under /usr:
// /etc/gitattributes, unless GIT_ATTR_NOSYSTEM), GIT_ATTR_SOURCE.
func (t *Tree) attributesMayApply(gitDir string) bool {
	if _, set := os.LookupEnv("GIT_ATTR_SOURCE"); set {
		return true
	}

	common, ok := repofiles.CommonDirOf(gitDir)
	if !ok {
		return true
	}

	cfg, ok := configfile.Files(gitDir, common)
	if !ok {
		return true
	}
	if _, set := NewConfig(cfg).Get("core.attributesFile"); set {
		return true
	}

	files := []string{filepath.Join(common, "info", "attributes")}
	if xdg := os.Getenv("XDG_CONFIG_HOME"); xdg != "" {
		files = append(files, filepath.Join(xdg, "git", "attributes"))
	} else if home := os.Getenv("HOME"); home != "" {
		files = append(files, filepath.Join(home, ".config", "git", "attributes"))
	}

	if no, ok := configfile.Bool(os.Getenv("GIT_ATTR_NOSYSTEM")); !ok {
		return true
	} else if !no {
		if !configfile.GitUnderUsr() {
			return true
		}
		files = append(files, "/etc/gitattributes")
	}

	for _, f := range files {
		if _, err := os.Stat(f); !os.IsNotExist(err) {
			return true
		}
	}

	return false
}

// blobIs reports whether the bytes of the file at p, as a blob, have the
// id oid (SHA-1 or SHA-256 by its length).
func blobIs(p string, oidLen int, oid []byte) bool {
	b, ok := readSmallFile(p, maxAsIs)
	if !ok {
		return false
	}

	var h hash.Hash
	if oidLen == sha256.Size {
		h = sha256.New()
	} else {
		h = sha1.New()
	}

	fmt.Fprintf(h, "blob %d\x00", len(b))
	h.Write(b)
	return bytes.Equal(h.Sum(nil), oid)
}
