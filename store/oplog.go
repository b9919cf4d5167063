package store

import (
	"encoding/json"
	"path/filepath"
	"sort"
	"strconv"
	"time"

	"github.com/git-agency/git-agency/errs"
)

// The operation log: repos/<repo_id>/oplog.jsonl, one JSON object
// (Operation) a line, appended under the repo lock, never rewritten.
//
//   - An operation that `git agency undo` can reverse (land, discard,
//     checkpoint apply, worktree rm --force) is one line, with what it
//     changed and what is needed to reverse it.
//   - An undo is two lines with its own seq: state "started" before it
//     touches anything, "done" once it finished ("aborted" when it failed
//     having changed nothing). A started undo without a second line was
//     interrupted; the next `undo` finishes it first.
//
// Each line is one write(2) of the whole line under O_APPEND, then fsync.
// A line cut short by a crash has no newline: the next append starts a new
// line first, and readers skip lines that do not decode.

// Operation kinds.
const (
	OpLand            = "land"
	OpDiscard         = "discard"
	OpCheckpointApply = "checkpoint_apply"
	OpWorktreeRemove  = "worktree_rm"
	OpUndo            = "undo"
)

// Undo states.
const (
	UndoStarted = "started"
	UndoDone    = "done"
	// UndoAborted: it failed having changed nothing (a compare-and-swap
	// that lost a race); as if it never ran.
	UndoAborted = "aborted"
	// UndoSkipped: `undo --skip` passed the operation by (it can never be
	// undone); the next undo reaches the one before it. Nothing changed.
	UndoSkipped = "skipped"
)

// Restore is a tree's state an undo recreates: the files of a snapshot
// commit (its first parent is the HEAD of the time) on top of a branch.
// Commit "" means the branch's tip, clean.
type Restore struct {
	Branch string `json:"branch"`
	// Head is the branch's tip at the time: an undo refuses when the
	// branch has moved since.
	Head string `json:"head"`
	// Commit is the snapshot commit holding the uncommitted work, and Ref
	// the ref that keeps it (a checkpoint's, or refs/agency/undo/<seq>).
	Commit     string `json:"commit,omitempty"`
	Ref        string `json:"ref,omitempty"`
	Checkpoint int    `json:"checkpoint,omitempty"`
	// NotKept are untracked files on the secrets denylist: they never
	// enter an object, so an undo cannot bring them back.
	NotKept []string `json:"not_kept,omitempty"`
}

// Operation is one line of oplog.jsonl.
type Operation struct {
	Seq  int    `json:"seq"`
	Op   string `json:"op"`
	Time string `json:"time"`
	// Key, when set, makes the append idempotent: a second line with the
	// key of an operation not undone is not written (a land finished again
	// after a crash).
	Key          string `json:"key,omitempty"`
	InvocationID string `json:"invocation_id,omitempty"`
	WorktreeID   string `json:"worktree_id,omitempty"`
	WorktreeName string `json:"worktree_name,omitempty"`
	// land: the integration branch and its HEAD before and after.
	Branch string `json:"branch,omitempty"`
	Before string `json:"before,omitempty"`
	After  string `json:"after,omitempty"`
	// Restore is the tree an undo recreates: the sandbox (land, discard,
	// checkpoint apply) or the integration tree (worktree rm --force).
	Restore *Restore `json:"restore,omitempty"`
	// discard: the invocation's landing status before.
	LandingStatus string `json:"landing_status,omitempty"`
	// checkpoint_apply: the checkpoint the sandbox was rolled back to.
	Applied       int    `json:"applied,omitempty"`
	AppliedCommit string `json:"applied_commit,omitempty"`
	// worktree_rm: the tree's path and the agents it stopped (each of
	// their discards is an operation of its own).
	TreePath string   `json:"tree_path,omitempty"`
	Stopped  []string `json:"stopped,omitempty"`
	// undo: the operation it reverses, and how far it got.
	Undoes int    `json:"undoes,omitempty"`
	State  string `json:"state,omitempty"`
	Note   string `json:"note,omitempty"`
}

// OplogPath is repos/<id>/oplog.jsonl.
func (s *Store) OplogPath() string { return filepath.Join(s.RepoDir(), "oplog.jsonl") }

// UndoRef is the ref that keeps the snapshot of an operation that is not
// an invocation's checkpoint (a worktree rm --force's integration tree).
func UndoRef(seq int) string { return UndoRefPrefix + strconv.Itoa(seq) }

// UndoRefPrefix is the namespace of UndoRef.
const UndoRefPrefix = "refs/agency/undo/"

// ReadOplog reads every line of the operation log, in file order. A
// missing log is empty; lines that do not decode are skipped.
func (s *Store) ReadOplog() ([]Operation, error) {
	lines, err := readLines(s.OplogPath())
	if err != nil {
		return nil, errs.IO("read", s.OplogPath(), err)
	}

	var out []Operation
	for _, l := range lines {
		var op Operation
		if json.Unmarshal(l, &op) == nil && op.Seq > 0 && op.Op != "" {
			out = append(out, op)
		}
	}

	return out, nil
}

// NextSeq is one more than the highest seq in lines.
func NextSeq(lines []Operation) int {
	max := 0
	for _, l := range lines {
		if l.Seq > max {
			max = l.Seq
		}
	}
	return max + 1
}

// AppendOperation appends op to the log. It expects the caller to hold the
// repo lock (the next Seq is read from the log first) and refuses with
// E_INTERNAL, writing nothing, when it does not. A zero Seq is given the
// next number, an empty Time now. With the Key of an operation not undone,
// nothing is written and that one is returned.
func (s *Store) AppendOperation(op Operation) (Operation, error) {
	if err := s.RequireLock("appending to the operation log"); err != nil {
		return op, err
	}

	lines, err := s.ReadOplog()
	if err != nil {
		return op, err
	}

	if op.Key != "" {
		for _, e := range FoldOplog(lines).Entries {
			if e.Key == op.Key && e.UndoneBy == 0 {
				return e.Operation, nil
			}
		}
	}

	if op.Seq == 0 {
		op.Seq = NextSeq(lines)
	}
	if op.Time == "" {
		op.Time = time.Now().UTC().Format(time.RFC3339)
	}

	line, err := json.Marshal(op)
	if err != nil {
		return op, errs.Internal("encode operation: %v", err)
	}
	if err := appendLine(s.OplogPath(), line, true); err != nil {
		return op, errs.IO("append", s.OplogPath(), err)
	}

	return op, nil
}

// OplogEntry is an operation as `undo --list` shows it.
type OplogEntry struct {
	Operation
	// UndoneBy is the seq of the undo that reversed (or skipped) it (0:
	// not undone).
	UndoneBy int `json:"undone_by,omitempty"`
	// UndoState is "started" while an undo of it is interrupted, "done"
	// once undone, "skipped" once `undo --skip` passed it by.
	UndoState string `json:"undo_state,omitempty"`
}

// Oplog is the folded log.
type Oplog struct {
	// Entries are the operations and undos, by seq; an undo is shown in
	// its last state.
	Entries []OplogEntry
	// Interrupted is an undo that started and never finished, or nil.
	Interrupted *Operation
}

// FoldOplog folds the log's lines: one entry per seq (the first line of an
// operation, the last of an undo), each operation marked with the undo
// that reversed it.
func FoldOplog(lines []Operation) *Oplog {
	bySeq := map[int]*OplogEntry{}
	for _, l := range lines {
		e, seen := bySeq[l.Seq]
		switch {
		case !seen:
			bySeq[l.Seq] = &OplogEntry{Operation: l}
		case l.Op == OpUndo && e.Op == OpUndo:
			e.Operation = l
		}
	}

	out := &Oplog{}
	for _, e := range bySeq {
		if e.Op != OpUndo {
			continue
		}

		target, ok := bySeq[e.Undoes]
		if !ok || target.Op == OpUndo {
			continue
		}

		switch e.State {
		case UndoDone:
			target.UndoneBy, target.UndoState = e.Seq, UndoDone
		case UndoSkipped:
			if target.UndoneBy == 0 {
				target.UndoneBy, target.UndoState = e.Seq, UndoSkipped
			}
		case UndoStarted:
			if target.UndoneBy == 0 {
				target.UndoState = UndoStarted
			}
			if out.Interrupted == nil || e.Seq > out.Interrupted.Seq {
				op := e.Operation
				out.Interrupted = &op
			}
		}
	}

	if out.Interrupted != nil && bySeq[out.Interrupted.Undoes].UndoneBy != 0 {
		out.Interrupted = nil // another undo finished it
	}
	for _, e := range bySeq {
		out.Entries = append(out.Entries, *e)
	}

	sort.Slice(out.Entries, func(i, j int) bool { return out.Entries[i].Seq < out.Entries[j].Seq })
	return out
}

// Next is the newest operation not undone yet (nil when there is none).
func (o *Oplog) Next() *OplogEntry {
	for i := len(o.Entries) - 1; i >= 0; i-- {
		e := &o.Entries[i]
		if e.Op != OpUndo && e.UndoneBy == 0 {
			return e
		}
	}
	return nil
}

// Entry returns the entry with seq, or nil.
func (o *Oplog) Entry(seq int) *OplogEntry {
	for i := range o.Entries {
		if o.Entries[i].Seq == seq {
			return &o.Entries[i]
		}
	}
	return nil
}
