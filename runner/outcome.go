package runner

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/git-agency/git-agency/errs"
	"github.com/git-agency/git-agency/store"
)

// EndRetryFor is how long a supervisor keeps trying to write a run's final
// record (each try waits up to its LockTimeout for the repo lock). The
// outcome file has the run's end meanwhile, and after.
const EndRetryFor = 24 * time.Hour

// endRetryMax is the longest pause between two tries.
const endRetryMax = 10 * time.Second

// recordEnd writes how the run ended (end changes a record into the final
// one): first into the outcome file, without the repo lock, so that
// readers know it at once; then into the record under the lock, tried
// again until it is written (a long command holding the lock, a full
// disk). While it cannot be, the outcome file says why (record_pending).
func (s *Supervisor) recordEnd(end func(*store.InvocationRecord) error) error {
	var o store.Outcome
	if cur, err := s.Store.ReadInvocation(s.Invocation); err == nil {
		c := *cur
		end(&c)
		o = outcomeOf(&c)
		s.writeOutcome(o)
	}

	wait := 200 * time.Millisecond
	deadline := time.Now().Add(EndRetryFor)
	for {
		_, err := s.update(end)
		if err == nil {
			if err := s.Store.RemoveOutcome(s.Invocation); err != nil {
				s.logf("%v", err)
			}
			return nil
		}

		if o.Ended {
			o.Pending = "record not written yet: " + pendingCause(err) + "; retrying"
			s.writeOutcome(o)
		}

		if time.Now().After(deadline) || s.recordGone() {
			return err
		}

		time.Sleep(wait)
		wait = min(2*wait, endRetryMax)
	}
}

// recordGone: the invocation's directory was removed (its data directory
// deleted, the repository's records removed by hand). No later try can
// write a record there, so the supervisor stops trying instead of waiting
// out EndRetryFor.
func (s *Supervisor) recordGone() bool {
	_, err := os.Lstat(s.Store.InvocationDir(s.Invocation))
	return errors.Is(err, fs.ErrNotExist)
}

// notePending says in the outcome file what the record cannot say while
// the run goes on (its logs are incomplete, and why the record is not
// written).
func (s *Supervisor) notePending(logsIncomplete string, err error) {
	cur, rerr := s.Store.ReadInvocation(s.Invocation)
	if rerr != nil {
		return
	}
	s.writeOutcome(store.Outcome{Turns: cur.Turns, LogsIncomplete: logsIncomplete,
		Pending: "record not written yet: " + pendingCause(err)})
}

func (s *Supervisor) writeOutcome(o store.Outcome) {
	if err := s.Store.WriteOutcome(s.Invocation, o); err != nil {
		s.logf("outcome: %v", err)
	}
}

// outcomeOf is the outcome file's view of a final record.
func outcomeOf(r *store.InvocationRecord) store.Outcome {
	return store.Outcome{Turns: r.Turns, Ended: true, Status: r.Status, ExitCode: r.ExitCode,
		ExitReason: store.Deref(r.ExitReason), FinishedAt: store.Deref(r.FinishedAt),
		LastOutputAt: store.Deref(r.LastOutputAt), LogsIncomplete: r.LogsIncomplete}
}

// pendingCause says in a few words why a record write failed.
func pendingCause(err error) string {
	switch {
	case errors.Is(err, syscall.ENOSPC):
		return "no space left on device (the data directory's disk is full)"
	case errs.Is(err, errs.ELocked):
		return "the repository lock is held by another command"
	}
	return errs.As(err).Error()
}

// lastStderrLine is the last line with text that the runner wrote on
// stderr (logs/stderr.log; its last 4 KiB are read), on one line and cut
// as summaries are: the summary of a run that failed without a word in
// its stream (a CLI that crashed before its first event). "" if none.
func (s *Supervisor) lastStderrLine() string {
	f, err := store.ReadLog(filepath.Join(s.Store.SandboxLogsDir(s.Invocation), "stderr.log"))
	if err != nil {
		return ""
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return ""
	}

	off := max(0, fi.Size()-4096)
	buf := make([]byte, fi.Size()-off)
	n, _ := f.ReadAt(buf, off)
	lines := strings.Split(string(buf[:n]), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if l := strings.TrimSpace(lines[i]); l != "" && (i > 0 || off == 0) {
			return summaryText(l)
		}
	}

	return ""
}
