package store

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/git-agency/git-agency/errs"
)

// Checkpoint reasons.
const (
	CheckpointAuto        = "auto"         // fsnotify, after the debounce
	CheckpointFallback    = "fallback"     // the periodic dirty check
	CheckpointExit        = "exit"         // the final one when the agent exits
	CheckpointManual      = "manual"       // `checkpoint create`
	CheckpointBeforeApply = "before-apply" // taken by `checkpoint apply` so it can be undone
	// Taken by land and discard before the sandbox tree goes, so that
	// `git agency undo` can recreate it.
	CheckpointBeforeLand    = "before-land"
	CheckpointBeforeDiscard = "before-discard"
)

// Checkpoint is one entry of sandboxes/<inv>/checkpoints.json: which
// snapshot ref, when, and why it was taken.
type Checkpoint struct {
	ID                int    `json:"id"`
	SnapshotRef       string `json:"snapshot_ref"`
	SnapshotCommit    string `json:"snapshot_commit"`
	HeadSHA           string `json:"head_sha"`
	CreatedAt         string `json:"created_at"`
	IncludesUntracked bool   `json:"includes_untracked"`
	Diffstat          string `json:"diffstat"`
	Reason            string `json:"reason,omitempty"`
}

// CheckpointsFile is sandboxes/<inv>/checkpoints.json.
type CheckpointsFile struct {
	Checkpoints []Checkpoint `json:"checkpoints"`
}

// SnapshotRef is the ref of checkpoint n of an invocation.
func SnapshotRef(inv string, n int) string { return SnapshotRefPrefix(inv) + strconv.Itoa(n) }

// SnapshotRefNumber returns n for refs/agency/snapshots/<inv>/<n>, or false.
func SnapshotRefNumber(inv, ref string) (int, bool) {
	rest, ok := strings.CutPrefix(ref, SnapshotRefPrefix(inv))
	if !ok {
		return 0, false
	}
	n, err := strconv.Atoi(rest)
	if err != nil || n <= 0 || strconv.Itoa(n) != rest {
		return 0, false
	}
	return n, true
}

// ReadCheckpoints reads an invocation's checkpoints.json, sorted by id. A
// missing file is an empty list; one that does not decode is
// E_STORE_CORRUPT.
func (s *Store) ReadCheckpoints(inv string) (*CheckpointsFile, error) {
	var f CheckpointsFile
	if err := ReadJSON(s.CheckpointsPath(inv), &f); err != nil {
		if os.IsNotExist(err) {
			return &CheckpointsFile{Checkpoints: []Checkpoint{}}, nil
		}
		if e := (*errs.Error)(nil); errors.As(err, &e) {
			return nil, e
		}
		return nil, errs.IO("read", s.CheckpointsPath(inv), err)
	}

	if f.Checkpoints == nil {
		f.Checkpoints = []Checkpoint{}
	}

	sort.SliceStable(f.Checkpoints, func(i, j int) bool { return f.Checkpoints[i].ID < f.Checkpoints[j].ID })
	return &f, nil
}

// writeCheckpoints writes checkpoints.json atomically.
func (s *Store) writeCheckpoints(inv string, f *CheckpointsFile) error {
	if f.Checkpoints == nil {
		f.Checkpoints = []Checkpoint{}
	}
	return writeJSONAtomic(s.CheckpointsPath(inv), f)
}

// AppendCheckpoint adds (or replaces, by id) one record in checkpoints.json.
// The caller holds the invocation's checkpoint lock.
func (s *Store) AppendCheckpoint(inv string, cp Checkpoint) error {
	f, err := s.ReadCheckpoints(inv)
	if err != nil {
		return err
	}

	out := f.Checkpoints[:0]
	for _, c := range f.Checkpoints {
		if c.ID != cp.ID {
			out = append(out, c)
		}
	}

	f.Checkpoints = append(out, cp)
	sort.SliceStable(f.Checkpoints, func(i, j int) bool { return f.Checkpoints[i].ID < f.Checkpoints[j].ID })
	return s.writeCheckpoints(inv, f)
}

// NextCheckpointID is one more than the highest id in use, counting both
// checkpoints.json and the snapshot refs that exist (refNames, full names):
// a number is never reused, even when a supervisor died between creating a
// ref and recording it.
func NextCheckpointID(inv string, f *CheckpointsFile, refNames []string) int {
	max := 0
	if f != nil {
		for _, c := range f.Checkpoints {
			if c.ID > max {
				max = c.ID
			}
		}
	}

	for _, r := range refNames {
		if n, ok := SnapshotRefNumber(inv, r); ok && n > max {
			max = n
		}
	}

	return max + 1
}

// checkpointLockPath is the lock that serialises checkpoints of one sandbox
// (the supervisor's checkpointer and `checkpoint create/apply`).
func (s *Store) checkpointLockPath(inv string) string {
	return filepath.Join(s.SandboxDir(inv), ".checkpoints.lock")
}

// LockCheckpoints takes the checkpoint lock of an invocation.
func (s *Store) LockCheckpoints(inv string, timeout time.Duration) (*Lock, error) {
	if err := os.MkdirAll(s.SandboxDir(inv), 0o700); err != nil {
		return nil, errs.IO("create", s.SandboxDir(inv), err)
	}
	return lockFile(context.Background(), s.checkpointLockPath(inv), timeout)
}
