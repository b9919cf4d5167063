package gitcore

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/git-agency/git-agency/internal/filestamp"
)

// watch asks for the same branch tips every second (the conflict
// forecast), and one `git for-each-ref` costs more than the rest of a
// refresh's file reads. With the files ref backend a branch's tip lives in
// its loose ref file or in packed-refs, and git changes a ref only by
// writing one of them (a lock file renamed over it): so while none of
// those files changed, neither did the answer. tipsMemo keeps the last
// answer with the stamps of the files it came from; the stamps are taken
// before git runs, so a ref moved in between is asked again next time.
//
// Nothing is kept when a file was not settled (internal/filestamp: a
// stamp could repeat), when a ref is not a branch (others may live in the
// worktree's own git directory), when a ref file is symbolic, or with the
// reftable backend.
type tipsMemo struct {
	mu     sync.Mutex
	key    string
	stamps []filestamp.Stamp
	tips   map[string]string
	// now is the clock files are settled by (tests set it).
	now func() time.Time
}

func (m *tipsMemo) lookup(key string, stamps []filestamp.Stamp) (map[string]string, bool) {
	if m == nil {
		return nil, false
	}

	m.mu.Lock()
	defer m.mu.Unlock()

	if m.tips == nil || m.key != key || len(m.stamps) != len(stamps) {
		return nil, false
	}

	for i := range stamps {
		if stamps[i] != m.stamps[i] {
			return nil, false
		}
	}

	return m.tips, true
}

func (m *tipsMemo) store(key string, stamps []filestamp.Stamp, tips map[string]string) {
	if m == nil {
		return
	}

	now := time.Now
	if m.now != nil {
		now = m.now
	}

	m.mu.Lock()
	defer m.mu.Unlock()
	m.key, m.stamps, m.tips = "", nil, nil
	for _, st := range stamps {
		if !st.Settled(now()) {
			return
		}
	}

	kept := make(map[string]string, len(tips))
	for k, v := range tips {
		kept[k] = v
	}

	m.key, m.stamps, m.tips = key, stamps, kept
}

// refStamps are the stamps of the files refs are read from: each ref's
// loose file, then packed-refs. keep is false when an answer must not be
// kept (see tipsMemo).
func (r *Repo) refStamps(refs []string) (stamps []filestamp.Stamp, keep bool) {
	if r.tips == nil || r.CommonDir == "" {
		return nil, false
	}
	if _, err := os.Lstat(filepath.Join(r.CommonDir, "reftable")); !os.IsNotExist(err) {
		return nil, false
	}

	stamps = make([]filestamp.Stamp, 0, len(refs)+1)
	for _, ref := range refs {
		if !strings.HasPrefix(ref, "refs/heads/") || strings.Contains(ref, "..") {
			return nil, false
		}

		path := filepath.Join(r.CommonDir, filepath.FromSlash(ref))
		st, symlink, err := filestamp.Lstat(path)
		if err != nil || symlink {
			return nil, false
		}

		if st.Exists && st.Size < 64 {
			// A loose ref is "<object id>\n" (41 or 65 bytes); a
			// symbolic one says "ref: ".
			if b, err := os.ReadFile(path); err != nil || strings.HasPrefix(string(b), "ref:") {
				return nil, false
			}
		}

		stamps = append(stamps, st)
	}

	st, symlink, err := filestamp.Lstat(filepath.Join(r.CommonDir, "packed-refs"))
	if err != nil || symlink {
		return nil, false
	}

	return append(stamps, st), true
}
