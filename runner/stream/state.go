package stream

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"time"
)

// StreamState is what status derivation needs to know about a stream.
type StreamState struct {
	// Events counts the events seen; zero means nothing was parsed yet.
	Events      int64     `json:"events"`
	LastKind    string    `json:"last_kind,omitempty"`
	LastSummary string    `json:"last_summary,omitempty"`
	LastEventAt time.Time `json:"last_event_at,omitzero"`
	// LastMessage is the summary of the latest message event.
	LastMessage string `json:"last_message,omitempty"`
	// LastError is the summary of the latest error, fatal or not (warnings
	// are not errors).
	LastError string `json:"last_error,omitempty"`
	SessionID string `json:"session_id,omitempty"`
	// ResultSeen is set by a claude result line, ResultIsError by one
	// with is_error.
	ResultSeen    bool `json:"result_seen,omitempty"`
	ResultIsError bool `json:"result_is_error,omitempty"`
	// TurnFailed is set by codex turn.failed and cleared by the next turn.
	TurnFailed bool `json:"turn_failed,omitempty"`
	// TurnEnded is set by codex turn.completed and cleared by the next turn.
	TurnEnded bool `json:"turn_ended,omitempty"`
	// WaitingForUser is set when the latest turn ended needing the user
	// (Event.NeedsInput) and cleared by any later activity.
	WaitingForUser bool `json:"waiting_for_user,omitempty"`
	Retries        int  `json:"retries,omitempty"`
	Unknown        int  `json:"unknown,omitempty"`
	// Denials counts tool calls the runner refused (Event.Denied);
	// LastDenial is the latest one's summary.
	Denials    int    `json:"denials,omitempty"`
	LastDenial string `json:"last_denial,omitempty"`
}

// Ended reports whether the stream reached the end of a turn: a claude
// result or a codex turn.completed, after everything else.
func (s *StreamState) Ended() bool {
	return s.ResultSeen || s.TurnEnded
}

// apply folds one event into the state and, if u is not nil, into the usage
// (see Event.Usage: totals replace, a message's usage is added). A
// subagent's events count for activity, usage and errors, but its messages
// are not the agent's last word. Parser and LoadState share it, so both see
// the same state.
func (s *StreamState) apply(ev Event, u *Usage) {
	s.Events++
	s.LastKind = ev.Kind
	s.LastSummary = ev.Summary
	s.LastEventAt = ev.Time
	if ev.SessionID != "" && ev.Agent == "" {
		s.SessionID = ev.SessionID
	}
	if ev.Agent == "" && !bookkeeping(ev.Kind) {
		s.WaitingForUser = ev.NeedsInput
	}

	if ev.Denied {
		s.Denials++
		s.LastDenial = ev.Summary
	}

	switch ev.Kind {
	case KindMessage:
		if ev.Agent == "" {
			s.LastMessage = ev.Summary
		}
	case KindTurnEnd:
		s.TurnEnded = true
	case KindTurnStart:
		s.TurnFailed, s.TurnEnded = false, false
		s.ResultSeen, s.ResultIsError = false, false
	case KindError:
		if !ev.Warning {
			s.LastError = ev.Summary
		}
		if ev.Retry {
			s.Retries++
		} else if ev.SourceType == "turn.failed" {
			s.TurnFailed = true
		}
	case KindResult:
		s.ResultSeen, s.ResultIsError = true, ev.IsError
		if ev.IsError {
			s.LastError = ev.Summary
		}
	case KindUnknown:
		s.Unknown++
	}

	if u == nil || ev.Usage == nil {
		return
	}

	switch ev.Kind {
	case KindTurnEnd, KindResult:
		// The conversation's total: never added up across turns, results
		// or resumed runs.
		turns := u.Turns + ev.Usage.Turns
		*u = *ev.Usage
		u.Turns = turns
	default:
		u.InputTokens += ev.Usage.InputTokens
		u.CachedInputTokens += ev.Usage.CachedInputTokens
		u.OutputTokens += ev.Usage.OutputTokens
		u.ReasoningTokens += ev.Usage.ReasoningTokens
	}
}

// bookkeeping reports whether events of a kind say nothing about whether
// the agent works or waits (a SessionEnd hook may follow the result).
func bookkeeping(kind string) bool {
	switch kind {
	case KindUnknown, KindHook, KindTask, KindProgress:
		return true
	}
	return false
}

// LoadState rebuilds the state and usage from a stream.jsonl written by a
// Parser. Lines that do not decode (a half-written last line, say) are
// skipped; only a read error is returned.
func LoadState(r io.Reader) (StreamState, Usage, error) {
	var s StreamState
	var u Usage
	br := bufio.NewReaderSize(r, 64<<10)
	var line []byte
	skipping := false // inside a line too long to be ours
	for {
		chunk, err := br.ReadSlice('\n')
		if !skipping {
			if len(line)+len(chunk) > maxLineBytes {
				skipping, line = true, nil
			} else {
				line = append(line, chunk...)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}

		if t := bytes.TrimSpace(line); !skipping && len(t) > 0 {
			var ev Event
			if json.Unmarshal(t, &ev) == nil && ev.Kind != "" {
				s.apply(ev, &u)
			}
		}

		skipping, line = false, line[:0]
		if err == io.EOF {
			return s, u, nil
		}
		if err != nil {
			return s, u, err
		}
	}
}
