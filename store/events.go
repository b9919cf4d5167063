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
func (s *Store) AppendEvent(inv, name string, data map[string]any) error {
	ev := Event{Time: time.Now().UTC().Format(time.RFC3339Nano), Event: name, Data: data}
	line, err := json.Marshal(ev)
	if err != nil {
		return errs.Internal("encode event: %v", err)
	}
	f, err := os.OpenFile(s.EventsPath(inv), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return errs.IO("append event", s.EventsPath(inv), err)
	}
	defer f.Close()
	if _, err := f.Write(append(line, '\n')); err != nil {
		return errs.IO("append event", s.EventsPath(inv), err)
	}
	return nil
}

// ReadEvents reads an invocation's events (malformed lines are skipped).
func (s *Store) ReadEvents(inv string) ([]Event, error) {
	data, err := os.ReadFile(s.EventsPath(inv))
	if err != nil {
		if os.IsNotExist(err) {
			return nil, nil
		}
		return nil, err
	}
	var out []Event
	start := 0
	for i, b := range data {
		if b != '\n' {
			continue
		}
		var ev Event
		if json.Unmarshal(data[start:i], &ev) == nil {
			out = append(out, ev)
		}
		start = i + 1
	}
	return out, nil
}
