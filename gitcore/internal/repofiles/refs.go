package repofiles

import (
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
)

// HexOID is s when it is an object id in hex, else "".
func HexOID(s string) string {
	if len(s) != 40 && len(s) != 64 {
		return ""
	}
	if _, err := hex.DecodeString(s); err != nil {
		return ""
	}
	return s
}

// WorktreeGitDir is the git directory of the worktree at tree: the one
// its .git file names, or its .git directory.
func WorktreeGitDir(tree string) (string, bool) {
	p := filepath.Join(tree, ".git")
	fi, err := os.Lstat(p)
	if err != nil {
		return "", false
	}
	if fi.IsDir() {
		return p, true
	}

	b, err := os.ReadFile(p)
	if err != nil {
		return "", false
	}

	dir, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir: ")
	if !ok {
		return "", false
	}
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(tree, dir)
	}

	return dir, true
}

// reftable reports whether the repository whose common directory is
// common may use the reftable backend (its refs are not files), or
// cannot tell.
func reftable(common string) bool {
	_, err := os.Lstat(filepath.Join(common, "reftable"))
	return !os.IsNotExist(err)
}

// Branch is the id the branch ref (refs/heads/…) holds, read as git reads
// it with the files backend: its loose ref file, else its packed-refs
// line; "" when there is none. ok is false when the files may not give
// git's answer (another kind of ref, a symbolic or malformed ref file, the
// reftable backend, a read error).
func Branch(common, ref string, packed *map[string]string) (id string, ok bool) {
	if common == "" || !strings.HasPrefix(ref, "refs/heads/") || strings.Contains(ref, "..") || reftable(common) {
		return "", false
	}

	b, err := os.ReadFile(filepath.Join(common, filepath.FromSlash(ref)))
	if err == nil {
		id := HexOID(strings.TrimSuffix(string(b), "\n"))
		return id, id != "" // "": symbolic, or not a ref file git wrote
	}

	if !os.IsNotExist(err) {
		return "", false
	}

	if *packed == nil {
		if *packed, err = packedRefs(common); err != nil {
			return "", false
		}
	}

	return (*packed)[ref], true
}

// packedRefs reads packed-refs' "<id> <ref>" lines (an empty map when
// there is none); a line it does not know is an error.
func packedRefs(common string) (map[string]string, error) {
	out := map[string]string{}
	b, err := os.ReadFile(filepath.Join(common, "packed-refs"))
	if os.IsNotExist(err) {
		return out, nil
	}
	if err != nil {
		return nil, err
	}

	for _, line := range strings.Split(string(b), "\n") {
		if line == "" || line[0] == '#' || line[0] == '^' {
			continue // the header, a peeled tag's target
		}

		id, ref, ok := strings.Cut(line, " ")
		if !ok || HexOID(id) == "" {
			return nil, errPackedRefs
		}

		out[ref] = id
	}

	return out, nil
}

var errPackedRefs = errors.New("packed-refs holds a line it does not know")

// Refs is every ref under prefix (a directory of refs, ending in "/") and
// the id it holds, read from the loose ref files under it and
// packed-refs (a loose file wins), as `git for-each-ref -- prefix` lists
// them with the files backend. ok is false when the files may not give
// git's answer: the reftable backend, a symbolic or malformed ref file, a
// lock file (a ref being written), a name git would not take, a read
// error.
func Refs(common, prefix string) (map[string]string, bool) {
	if !plainPrefix(prefix) || common == "" || reftable(common) {
		return nil, false
	}

	packed, err := packedRefs(common)
	if err != nil {
		return nil, false
	}

	out := map[string]string{}
	for ref, id := range packed {
		if strings.HasPrefix(ref, prefix) {
			out[ref] = id
		}
	}

	root := filepath.Join(common, filepath.FromSlash(prefix))
	err = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil && os.IsNotExist(err) && p == root {
			return filepath.SkipDir // no loose ref under prefix
		}
		if err != nil || d.IsDir() {
			return err
		}

		id, ok := looseRef(p, d)
		if !ok {
			return errPackedRefs
		}

		rel, err := filepath.Rel(root, p)
		out[prefix+filepath.ToSlash(rel)] = id
		return err
	})
	return out, err == nil
}

// looseRef is the id the loose ref file at p holds; ok is false for a
// file git would not read as a ref (a lock file, a dot file, a symbolic
// or malformed ref, not a regular file).
func looseRef(p string, d os.DirEntry) (string, bool) {
	if !d.Type().IsRegular() || strings.HasSuffix(p, ".lock") || strings.HasPrefix(d.Name(), ".") {
		return "", false
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return "", false
	}
	id := HexOID(strings.TrimSuffix(string(b), "\n"))
	return id, id != ""
}

// plainPrefix: a directory of refs, named literally (no pattern), as
// for-each-ref matches it.
func plainPrefix(prefix string) bool {
	return strings.HasPrefix(prefix, "refs/") && strings.HasSuffix(prefix, "/") &&
		!strings.ContainsAny(prefix, "*?[\\") && !strings.Contains(prefix, "..")
}
