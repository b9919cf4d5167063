package gitcore

import "github.com/git-agency/git-agency/gitcore/internal/repofiles"

// RefTipsFromFiles is RefTips read from the ref files, without running
// git: with the files backend a branch's tip is its loose ref file, else
// its line in packed-refs, and git replaces either file whole (a lock file
// renamed over it), so each read sees one state of it. A one-shot reader
// (agent ls) spares the `for-each-ref` that was most of a quiet read. ok
// is false when the files may not give git's answer (a ref other than a
// branch, a symbolic or malformed ref file, the reftable backend, a read
// error): ask RefTips.
func (r *Repo) RefTipsFromFiles(refs ...string) (map[string]string, bool) {
	tips := make(map[string]string, len(refs))
	var packed map[string]string
	for _, ref := range refs {
		id, ok := repofiles.Branch(r.CommonDir, ref, &packed)
		if !ok {
			return nil, false
		}
		if id != "" {
			tips[ref] = id
		}
	}

	return tips, true
}
