package gitcore

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/git-agency/git-agency/gitcore/internal/repofiles"
)

// CommitFromFiles reads a commit's tree and parents from its loose object
// file, without running git: a commit just made (a `git commit` in the
// integration tree, a land's fast-forward) is loose until git packs it.
// ok is false when it is not there as a loose object (packed, in an
// alternate) or does not read as a commit: ask git.
func (r *Repo) CommitFromFiles(id string) (tree string, parents []string, ok bool) {
	if repofiles.HexOID(id) == "" || r.CommonDir == "" {
		return "", nil, false
	}

	f, err := os.Open(filepath.Join(r.CommonDir, "objects", id[:2], id[2:]))
	if err != nil {
		return "", nil, false
	}
	defer f.Close()
	z, err := zlib.NewReader(bufio.NewReader(f))
	if err != nil {
		return "", nil, false
	}
	defer z.Close()

	// The header lines come first and are short; a commit's message is
	// not needed.
	buf := make([]byte, 4096)
	n, _ := io.ReadFull(z, buf)
	head, rest, found := bytes.Cut(buf[:n], []byte{0})
	if !found || !strings.HasPrefix(string(head), "commit ") {
		return "", nil, false
	}

	for _, line := range strings.Split(string(rest), "\n") {
		key, val, _ := strings.Cut(line, " ")
		switch key {
		case "tree":
			tree = repofiles.HexOID(val)
		case "parent":
			if repofiles.HexOID(val) == "" {
				return "", nil, false
			}
			parents = append(parents, val)
		default:
			return tree, parents, tree != "" // the headers after parents
		}
	}

	return "", nil, false // cut short before the author line
}

// maxLooseRead bounds what looseObject reads of one object: a tree of
// some hundred thousand entries.
const maxLooseRead = 32 << 20

// looseObject reads the object id from its loose object file: its type
// and body. ok is false when it is not there as a loose object (packed, in
// an alternate) or does not read as one: ask git.
func (r *Repo) looseObject(id string) (kind string, body []byte, ok bool) {
	if repofiles.HexOID(id) == "" || r.CommonDir == "" {
		return "", nil, false
	}
	f, err := os.Open(filepath.Join(r.ObjectsDir(), id[:2], id[2:]))
	if err != nil {
		return "", nil, false
	}
	defer f.Close()
	z, err := zlib.NewReader(bufio.NewReader(f))
	if err != nil {
		return "", nil, false
	}
	defer z.Close()
	data, err := io.ReadAll(io.LimitReader(z, maxLooseRead))
	if err != nil {
		return "", nil, false
	}
	head, body, found := bytes.Cut(data, []byte{0})
	kind, size, _ := strings.Cut(string(head), " ")
	if n, err := strconv.Atoi(size); !found || err != nil || n != len(body) {
		return "", nil, false
	}
	return kind, body, true
}

// readTreesFromFiles is readTrees from loose object files and the
// worktree's HEAD file, without running git (an agent's commits and the
// trees it just wrote are loose until git packs them); ok is false when
// anything it needs is not there that way.
func (t *Tree) readTreesFromFiles(base string, dirs []string) (*baseTrees, bool) {
	head := t.HeadFromFiles()
	if head == "" {
		return nil, false
	}
	oidLen := len(base) / 2
	kind, body, ok := t.repo.looseObject(base)
	if ok && kind == "commit" {
		var root string
		if root, _, ok = t.repo.CommitFromFiles(base); ok {
			kind, body, ok = t.repo.looseObject(root)
			base = root
		}
	}
	if !ok || kind != "tree" {
		return nil, false
	}
	rootEnts, err := parseTree(body, oidLen)
	if err != nil {
		return nil, false
	}
	bt := &baseTrees{head: head, trees: map[string][]namedEntry{}}
	for _, d := range dirs {
		if d == "" {
			bt.root, bt.trees[""] = base, rootEnts
			continue
		}
		ents, found, ok := t.repo.looseTreeAt(rootEnts, d, oidLen)
		if !ok {
			return nil, false
		}
		if found {
			bt.trees[d] = ents
		}
	}
	return bt, true
}

// looseTreeAt walks from a root tree's entries to the directory d, as
// `git cat-file --batch` resolves <tree>:<d>: found is false where
// cat-file says "missing" (no such path, a path through a file, a
// submodule), and ents nil for a file at d. ok is false when a tree on the
// way is not a loose object.
func (r *Repo) looseTreeAt(ents []namedEntry, d string, oidLen int) (out []namedEntry, found, ok bool) {
	parts := strings.Split(d, "/")
	for i, name := range parts {
		var e *namedEntry
		for j := range ents {
			if ents[j].name == name {
				e = &ents[j]
				break
			}
		}
		switch {
		case e == nil || e.Mode == "160000":
			return nil, false, true
		case !e.isTree() && i == len(parts)-1:
			return nil, true, true
		case !e.isTree():
			return nil, false, true
		}
		kind, body, ok := r.looseObject(e.OID)
		if !ok || kind != "tree" {
			return nil, false, false
		}
		var err error
		if ents, err = parseTree(body, oidLen); err != nil {
			return nil, false, false
		}
	}
	return ents, true, true
}
