package agency

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/git-agency/git-agency/store"
)

// DiskUseTTL is how long a running sandbox's cached disk use stands. An
// ended one's stands until its tree goes.
const DiskUseTTL = time.Minute

// diskUse is sandboxes/<inv>/disk_usage.json, the cache of DiskBytes.
type diskUse struct {
	Bytes      int64  `json:"bytes"`
	ComputedAt string `json:"computed_at"`
}

// DiskBytes is the disk space a sandbox tree takes (allocated blocks, so
// a copy-on-write clone counts as a full file), cached in
// sandboxes/<inv>/disk_usage.json. Only `agent show` and `agent ls --json`
// ask for it, never watch or the human ls. A removed tree is 0.
func (a *App) DiskBytes(r *store.InvocationRecord) int64 {
	tree := a.Store.SandboxTreePath(r.InvocationID)
	if _, err := os.Lstat(tree); err != nil {
		return 0
	}

	cache := filepath.Join(a.Store.SandboxDir(r.InvocationID), "disk_usage.json")
	if data, err := os.ReadFile(cache); err == nil {
		var c diskUse
		if json.Unmarshal(data, &c) == nil {
			at, err := time.Parse(time.RFC3339Nano, c.ComputedAt)
			fresh := err == nil && a.Now().Sub(at) < DiskUseTTL
			if ended := store.Deref(r.FinishedAt); !r.Active() && ended != "" && err == nil {
				// finished_at has whole seconds: a size measured within
				// the second the run ended may predate its last writes.
				if fin, perr := time.Parse(time.RFC3339, ended); perr == nil && !at.Before(fin.Truncate(time.Second).Add(time.Second)) {
					fresh = true
				}
			}

			if fresh {
				return c.Bytes
			}
		}
	}

	n := allocated(tree)
	if data, err := json.Marshal(diskUse{Bytes: n, ComputedAt: a.Now().UTC().Format(time.RFC3339Nano)}); err == nil {
		// A cache: when it cannot be written, the next read measures again.
		_ = store.WriteFileAtomic(cache, data, 0o600)
	}

	return n
}

// allocated sums the blocks allocated to everything under dir.
func allocated(dir string) int64 {
	var n int64

	// The walk's function never fails: what cannot be read is not counted.
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}

		if info, err := d.Info(); err == nil {
			if st, ok := info.Sys().(*syscall.Stat_t); ok {
				n += st.Blocks * 512
			} else {
				n += info.Size()
			}
		}

		return nil
	})
	return n
}
