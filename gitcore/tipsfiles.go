package gitcore

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
)

// RefTipsFromFiles is RefTips read from the ref files, without running
// git: with the files backend a branch's tip is its loose ref file, else
// its line in packed-refs, and git replaces either file whole (a lock file
// renamed over it), so each read sees one state of it. A one-shot reader
// (agent ls) spares the `for-each-ref` that was most of a quiet read. ok
// is false when the files may not give git's answer (a ref other than a
// branch, a symbolic or malformed ref file, the reftable backend, a read
// error): ask RefTips.
func (r *Repo) RefTipsFromFiles(refs ...string) (map[string]string, bool) {
	if r.CommonDir == "" {
		return nil, false
	}
	if _, err := os.Lstat(filepath.Join(r.CommonDir, "reftable")); !os.IsNotExist(err) {
		return nil, false
	}
	tips := make(map[string]string, len(refs))
	var packed map[string]string
	for _, ref := range refs {
		if !strings.HasPrefix(ref, "refs/heads/") || strings.Contains(ref, "..") {
			return nil, false
		}
		b, err := os.ReadFile(filepath.Join(r.CommonDir, filepath.FromSlash(ref)))
		if err == nil {
			id := hexOID(strings.TrimSuffix(string(b), "\n"))
			if id == "" {
				return nil, false // symbolic, or not a ref file git wrote
			}
			tips[ref] = id
			continue
		}
		if !os.IsNotExist(err) {
			return nil, false
		}
		if packed == nil {
			if packed, err = readPackedRefs(r.CommonDir); err != nil {
				return nil, false
			}
		}
		if id, ok := packed[ref]; ok {
			tips[ref] = id
		}
	}
	return tips, true
}

// readPackedRefs reads packed-refs' "<id> <ref>" lines (an empty map when
// there is none); a line it does not know is an error.
func readPackedRefs(common string) (map[string]string, error) {
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
		if !ok || hexOID(id) == "" {
			return nil, errPackedRefs
		}
		out[ref] = id
	}
	return out, nil
}

var errPackedRefs = errors.New("packed-refs holds a line it does not know")
