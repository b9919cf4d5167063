package store

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"

	"github.com/git-agency/git-agency/errs"
)

// The outcome file: invocations/<inv>/outcome.json. The supervisor writes
// how a run ended there first, without the repo lock, then the record
// (under the lock, tried again until it is written). Until the record says
// so, readers take the run's end from this file (applyOutcome), so a lock
// held for long or a full disk never loses it.
//
// The supervisor reserves the file (outcomeSize bytes) when it starts, and
// rewrites it in place: on a full disk, writing blocks a file already has
// needs no new space, where a temp file and a rename would. While the run
// goes on, the file also says what the record cannot (logs incomplete, the
// record not writable).

// outcomeSize is the size the outcome file is reserved with.
const outcomeSize = 4096

// Outcome is what the outcome file holds.
type Outcome struct {
	// Turns is the turn it is about (the record's turns then): a later
	// turn's record is not changed by an earlier turn's outcome.
	Turns int  `json:"turns"`
	Ended bool `json:"ended"`
	// How it ended (Ended), as the final record has it.
	Status       string `json:"status,omitempty"`
	ExitCode     *int   `json:"exit_code,omitempty"`
	ExitReason   string `json:"exit_reason,omitempty"`
	FinishedAt   string `json:"finished_at,omitempty"`
	LastOutputAt string `json:"last_output_at,omitempty"`
	// LogsIncomplete: as the record's field.
	LogsIncomplete string `json:"logs_incomplete,omitempty"`
	// Pending says why the record does not have this yet ("" once
	// nothing stands in the way).
	Pending string `json:"pending,omitempty"`
}

// outcomePath is invocations/<inv>/outcome.json.
func (s *Store) outcomePath(inv string) string {
	return filepath.Join(s.InvocationDir(inv), "outcome.json")
}

// ReserveOutcome creates the outcome file of a run, outcomeSize bytes,
// saying nothing has ended yet.
func (s *Store) ReserveOutcome(inv string, turns int) error {
	if err := s.checkWrite(s.outcomePath(inv)); err != nil {
		return errs.IO("write", s.outcomePath(inv), err)
	}
	data, err := paddedOutcome(Outcome{Turns: turns})
	if err != nil {
		return err
	}
	return WriteFileAtomic(s.outcomePath(inv), data, 0o600)
}

// WriteOutcome rewrites the outcome file in place (see the file's comment)
// and fsyncs it. Without a reserved file (or for an outcome that does not
// fit) it is written as a new file.
func (s *Store) WriteOutcome(inv string, o Outcome) error {
	path := s.outcomePath(inv)
	data, err := paddedOutcome(o)
	if err != nil {
		return err
	}

	if fi, err := os.Stat(path); err == nil && fi.Size() == int64(len(data)) {
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err == nil {
			_, err = f.WriteAt(data, 0)
			if err == nil {
				err = f.Sync()
			}
			if cerr := f.Close(); err == nil {
				err = cerr
			}
		}

		if err != nil {
			return errs.IO("write", path, err)
		}

		return nil
	}

	if err := s.checkWrite(path); err != nil {
		return errs.IO("write", path, err)
	}

	return WriteFileAtomic(path, data, 0o600)
}

// paddedOutcome encodes o, padded with spaces to outcomeSize (longer when
// it does not fit).
func paddedOutcome(o Outcome) ([]byte, error) {
	data, err := json.Marshal(o)
	if err != nil {
		return nil, errs.Internal("encode outcome: %v", err)
	}
	data = append(data, '\n')
	if len(data) < outcomeSize {
		data = append(data, bytes.Repeat([]byte{' '}, outcomeSize-len(data))...)
	}
	return data, nil
}

// readOutcome reads an invocation's outcome file; ok is false when there
// is none or it does not decode (a write cut short: the record decides).
func (s *Store) readOutcome(inv string) (o Outcome, ok bool) {
	data, err := os.ReadFile(s.outcomePath(inv))
	if err != nil || json.Unmarshal(data, &o) != nil {
		return Outcome{}, false
	}
	return o, true
}

// RemoveOutcome removes the outcome file once the record says everything
// it said.
func (s *Store) RemoveOutcome(inv string) error {
	if err := os.Remove(s.outcomePath(inv)); err != nil && !os.IsNotExist(err) {
		return errs.IO("remove", s.outcomePath(inv), err)
	}
	return nil
}

// applyOutcome gives a record that still says starting or running what
// its run's outcome file says (same turn): how it ended, and what stands
// in the way of writing it. It reports whether it changed rec.
func applyOutcome(rec *InvocationRecord, o Outcome) bool {
	if rec.Status != StatusRunning && rec.Status != StatusStarting {
		return false
	}
	if o.Turns != rec.Turns {
		return false
	}
	if o.LogsIncomplete != "" && rec.LogsIncomplete == "" {
		rec.LogsIncomplete = o.LogsIncomplete
	}

	rec.RecordPending = o.Pending

	if !o.Ended {
		return true
	}

	rec.Status = o.Status
	rec.ExitCode = o.ExitCode
	rec.ExitReason = Str(o.ExitReason)
	rec.FinishedAt = Str(o.FinishedAt)
	if o.LastOutputAt != "" {
		rec.LastOutputAt = Str(o.LastOutputAt)
	}
	if rec.LandingStatus == nil {
		rec.LandingStatus = Str(LandingPending)
	}

	return true
}

// withOutcome applies the invocation's outcome file to rec (see
// applyOutcome); a record that does not say starting or running costs
// nothing.
func (s *Store) withOutcome(rec *InvocationRecord) {
	if rec.Status != StatusRunning && rec.Status != StatusStarting {
		return
	}
	if o, ok := s.readOutcome(rec.InvocationID); ok {
		applyOutcome(rec, o)
	}
}

// checkWrite asks the store's write fault (tests: a full disk) about a
// write to path that needs new space.
func (s *Store) checkWrite(path string) error {
	if s.WriteFault == nil {
		return nil
	}
	return s.WriteFault(path)
}
