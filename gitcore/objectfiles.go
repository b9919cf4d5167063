package gitcore

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"io"
	"os"
	"path/filepath"
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
