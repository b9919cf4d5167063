package gitcore

import (
	"bufio"
	"bytes"
	"crypto/sha1"
	"crypto/sha256"
	"fmt"
	"hash"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/git-agency/git-agency/gitcore/internal/index"
	"github.com/git-agency/git-agency/gitcore/internal/repofiles"
)

// submoduleDirt reads whether the submodule checked out at dir has
// changed files (modified: a tracked file changed, deleted or of another
// type, a conflict or intent-to-add entry, a nested submodule at another
// commit or with changes of its own) or untracked files that are not
// ignored (looked for only when untracked), as its own `git status`
// would, running nothing: stat data first, as git compares it (see
// statDataMatches), then the content of the files whose stat data
// differs or that are racily clean, hashed as they are. The submodule's
// filters are exactly what must not run, so a file its clean filter would
// turn back into the committed content counts as modified. Untracked
// files the user's excludes file (excludes) ignores do not count. A
// submodule that is not checked out (no .git) has nothing changed.
func submoduleDirt(dir string, untracked bool, excludes string, depth int) dirt {
	gitDir, ok := submoduleGitDir(dir)
	if !ok {
		return dirt{}
	}
	if depth >= maxSubmoduleDepth {
		return dirt{modified: true}
	}
	idx, ok := readSubmoduleIndex(gitDir)
	if !ok {
		return dirt{modified: true}
	}
	d := dirt{modified: idx.modified || idx.changedFiles(dir, untracked, excludes, depth)}
	if untracked {
		d.untracked = hasUntrackedFiles(dir, gitDir, excludes, idx)
	}
	return d
}

// subIndex is what submoduleDirt reads of a submodule's index.
type subIndex struct {
	files    []statEntry // entries of files git compares with the tree
	links    []statEntry // nested submodules (oid: the commit recorded)
	tracked  map[string]bool
	oidLen   int
	mtime    uint32 // the index file's, in seconds (racily clean entries)
	modified bool   // a conflict or an intent-to-add entry
}

// readSubmoduleIndex reads the index of the git directory gitDir; a
// missing index is an empty one (a repository with nothing staged).
func readSubmoduleIndex(gitDir string) (subIndex, bool) {
	out := subIndex{tracked: map[string]bool{}, oidLen: len(gitDirHead(gitDir)) / 2}
	p := filepath.Join(gitDir, "index")
	if _, err := os.Lstat(p); os.IsNotExist(err) {
		return out, true
	}
	data, mtime, ok := readRegularStat(p, maxSubmoduleIndex)
	if !ok {
		return out, false
	}
	out.mtime = uint32(mtime)
	ok = forEntries(data, out.oidLen, func(e *index.Entry) {
		if out.oidLen == 0 {
			out.oidLen = len(e.OID)
		}
		out.add(e)
	})
	return out, ok
}

func (s *subIndex) add(e *index.Entry) {
	name := string(e.Path)
	s.tracked[name] = true
	switch {
	case e.Stage() != 0 || e.IntentToAdd():
		s.modified = true
	case e.SkipWorktree() || e.AssumeValid() || e.SparseDir():
	case e.Gitlink():
		s.links = append(s.links, statEntry{path: name, oid: bytes.Clone(e.OID)})
	default:
		s.files = append(s.files, statEntry{path: name, oid: bytes.Clone(e.OID), mode: e.Mode,
			ctime: e.CtimeSec, ctimeN: e.CtimeNsec, mtime: e.MtimeSec, mtim: e.MtimeNsec,
			ino: e.Ino, uid: e.UID, gid: e.GID, size: e.Size})
	}
}

// changedFiles reports whether a tracked file of the submodule at dir, or
// a nested submodule, differs from the index.
func (s *subIndex) changedFiles(dir string, untracked bool, excludes string, depth int) bool {
	dirs := leadingDirs{root: dir, real: map[string]bool{}}
	st := newEntryStatter(dir)
	defer st.close()
	racy := racyRule{index: s.mtime}
	budget := int64(maxSubmoduleHashed)
	for _, e := range s.files {
		d, name := path.Split(e.path)
		d = strings.TrimSuffix(d, "/")
		if d == "" {
			d = "."
		}
		if !dirs.allReal(d) {
			return true
		}
		same, ok := st.match(d, name, e)
		if !ok {
			return true
		}
		if (!same || racy.racy(&e)) && !sameBlob(filepath.Join(dir, filepath.FromSlash(e.path)), e, &budget) {
			return true
		}
	}
	for _, l := range s.links {
		sub := filepath.Join(dir, filepath.FromSlash(l.path))
		gitDir, ok := submoduleGitDir(sub)
		if !ok {
			continue
		}
		if head := gitDirHead(gitDir); head != fmt.Sprintf("%x", l.oid) {
			return true
		}
		if d := submoduleDirt(sub, untracked, excludes, depth+1); d.modified || d.untracked {
			return true
		}
	}
	return false
}

// sameBlob reports whether the file at p (of entry e), hashed as a blob
// as it is, is e's object; budget bounds the bytes hashed.
func sameBlob(p string, e statEntry, budget *int64) bool {
	var content io.Reader
	var size int64
	if e.mode&0o170000 == 0o120000 {
		target, err := os.Readlink(p)
		if err != nil {
			return false
		}
		content, size = strings.NewReader(target), int64(len(target))
	} else {
		f, err := openRegular(p)
		if err != nil {
			return false
		}
		defer f.Close()
		fi, err := f.Stat()
		if err != nil {
			return false
		}
		content, size = f, fi.Size()
	}
	if *budget -= size; *budget < 0 {
		return false
	}
	var h hash.Hash
	switch len(e.oid) {
	case 20:
		h = sha1.New()
	case 32:
		h = sha256.New()
	default:
		return false
	}
	fmt.Fprintf(h, "blob %d\x00", size)
	if n, err := io.CopyN(h, content, size); err != nil || n != size {
		return false
	}
	return bytes.Equal(h.Sum(nil), e.oid)
}

// gitDirHead is the commit HEAD names in the git directory gitDir, read
// from its files (only regular files, never through a link): a detached
// HEAD, or its branch's loose ref, else its packed-refs line; "" when it
// cannot tell.
func gitDirHead(gitDir string) string {
	b, ok := readRegular(filepath.Join(gitDir, "HEAD"), 4096)
	if !ok {
		return ""
	}
	s := strings.TrimSpace(string(b))
	ref, symbolic := strings.CutPrefix(s, "ref: ")
	if !symbolic {
		return repofiles.HexOID(s)
	}
	if !strings.HasPrefix(ref, "refs/") || strings.Contains(ref, "..") {
		return ""
	}
	common := gitCommonDir(gitDir)
	if b, ok := readRegular(filepath.Join(common, filepath.FromSlash(ref)), 4096); ok {
		return repofiles.HexOID(strings.TrimSpace(string(b)))
	}
	packed, ok := readRegular(filepath.Join(common, "packed-refs"), maxSubmoduleIndex)
	if !ok {
		return ""
	}
	sc := bufio.NewScanner(bytes.NewReader(packed))
	for sc.Scan() {
		if id, name, ok := strings.Cut(sc.Text(), " "); ok && name == ref {
			return repofiles.HexOID(id)
		}
	}
	return ""
}
