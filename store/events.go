package store

import (
	"encoding/json"
	"os"
	"time"

	"github.com/git-agency/git-agency/errs"
)

// Event is one line of an invocation's events.jsonl.
type Event struct {
	Time  string         `json:"time"`
	Event string         `json:"event"`
	Data  map[string]any `json:"data,omitempty"`
}

// AppendEvent appends one event to invocations/<inv>/events.jsonl. A single
// write of a line under O_APPEND keeps concurrent writers from interleaving.
// When the file does not end in a newline (a writer killed mid-line, a full
// disk) the event starts on a fresh line, so it is not lost with the cut one.
//
// Events are an invocation's history; its state is its record (nothing
// reads state back from events). A caller that appends after it changed a
// record (landed, stopped, reconciled) may drop this error: failing then
// would report a completed operation as failed. A caller for which the
// event is the only trace of what happened must not.
func (s *Store) AppendEvent(inv, name string, data map[string]any) error {
	ev := Event{Time: time.Now().UTC().Format(time.RFC3339Nano), Event: name, Data: data}
	line, err := json.Marshal(ev)
	if err != nil {
		return errs.Internal("encode event: %v", err)
	}
	if err := s.checkWrite(s.EventsPath(inv)); err != nil {
		return errs.IO("append event", s.EventsPath(inv), err)
	}
	if err := appendLine(s.EventsPath(inv), line, false); err != nil {
		return errs.IO("append event", s.EventsPath(inv), err)
	}

	return nil
}

// ReadEvents reads an invocation's events (malformed lines are skipped).
func (s *Store) ReadEvents(inv string) ([]Event, error) {
	lines, err := readLines(s.EventsPath(inv))
	if err != nil {
		return nil, err
	}

	var out []Event
	for _, l := range lines {
		var ev Event
		if json.Unmarshal(l, &ev) == nil {
			out = append(out, ev)
		}
	}

	return out, nil
}

// damagedEventLines counts the lines of an invocation's events.jsonl that
// are not an event: garbage, or a line cut short (the last one without its
// newline). A missing file has none.
func (s *Store) damagedEventLines(inv string) (int, error) {
	return DamagedLines(s.EventsPath(inv), true)
}

// AppendSupervisorLog appends a timestamped line to invocations/<inv>/
// supervisor.log, the invocation's diagnostic log (the supervisor writes
// its own lines there the same way). Commands use it for what went wrong
// without failing them, such as an event that could not be recorded.
func (s *Store) AppendSupervisorLog(inv, msg string) error {
	path := s.SupervisorLogPath(inv)
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return errs.IO("append to", path, err)
	}
	defer f.Close()
	line := time.Now().UTC().Format(time.RFC3339Nano) + " " + msg + "\n"
	if _, err := f.WriteString(line); err != nil {
		return errs.IO("append to", path, err)
	}
	return nil
}
