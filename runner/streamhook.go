package runner

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/git-agency/git-agency/runner/stream"
	"github.com/git-agency/git-agency/store"
)

// StatusFile is logs/status.json: the stream's state and usage, rewritten
// (atomically, at most every StatusInterval) by the supervisor while the
// runner runs. Readers (ls, show, watch) take the live semantic status from
// it instead of parsing logs, and the supervisor never takes the repository
// lock for it: meta.json is only rewritten with the final values at exit.
const StatusFile = "status.json"

// StatusInterval bounds how often status.json is rewritten.
const StatusInterval = 250 * time.Millisecond

// LiveStatus is the content of logs/status.json.
type LiveStatus struct {
	UpdatedAt time.Time          `json:"updated_at"`
	Format    string             `json:"format"`
	State     stream.StreamState `json:"state"`
	Usage     stream.Usage       `json:"usage"`
}

// StatusPath is an invocation's logs/status.json.
func StatusPath(st *store.Store, inv string) string {
	return filepath.Join(st.SandboxLogsDir(inv), StatusFile)
}

// ReadLiveStatus reads logs/status.json; nil when there is none (a runner
// without a stream format, a headed run) or it cannot be read.
func ReadLiveStatus(st *store.Store, inv string) *LiveStatus {
	b, err := os.ReadFile(StatusPath(st, inv))
	if err != nil {
		return nil
	}
	var ls LiveStatus
	if json.Unmarshal(b, &ls) != nil {
		return nil
	}
	return &ls
}

// ParserFormat maps a runner's configured format to the parser's: "claude"
// and "codex" as they are, "auto" detects per line, anything else (the
// empty format of custom runners) means no parsing and no stream.jsonl.
func ParserFormat(format string) (string, bool) {
	switch format {
	case stream.FormatClaude, stream.FormatCodex:
		return format, true
	case "auto":
		return stream.FormatAuto, true
	}
	return "", false
}

// UsageRecord converts the stream's usage to the record's.
func UsageRecord(u stream.Usage) *store.Usage {
	return &store.Usage{Turns: u.Turns, InputTokens: u.InputTokens, OutputTokens: u.OutputTokens, CostUSD: u.CostUSD}
}

// Semantic is the semantic layer of an invocation's status (spec "Status
// Model"): the runner's own runner_status.json when valid, else what the
// stream says: "error" (a failed result or turn), "needs_input" (a turn
// that ended waiting for the user), "ready_for_review" (the stream ended
// cleanly; only when ended is set), else "" with the latest summary.
func Semantic(rs *stream.RunnerStatus, st stream.StreamState, ended bool) (status, summary string) {
	last := st.LastMessage
	if last == "" {
		last = st.LastSummary
	}
	switch {
	case rs != nil && rs.Valid():
		if rs.Summary != "" {
			return rs.Status, rs.Summary
		}
		return rs.Status, last
	case st.ResultIsError || st.TurnFailed:
		if st.LastError != "" {
			return stream.StatusError, st.LastError
		}
		return stream.StatusError, "the agent reported an error"
	case st.WaitingForUser:
		return stream.StatusNeedsInput, st.LastSummary
	case ended && (st.ResultSeen || st.LastKind == stream.KindTurnEnd):
		return stream.StatusReadyForReview, last
	}
	return "", last
}

// streamHook feeds a runner's stdout to the stream parser, which appends
// normalised events to logs/stream.jsonl as output arrives, and keeps
// logs/status.json current.
type streamHook struct {
	s      *Supervisor
	format string
	f      *os.File
	p      *stream.Parser
	stop   chan struct{}
	done   chan struct{}
	mu     sync.Mutex
	wrote  int64 // parser event count at the last status.json write
}

func newStreamHook(s *Supervisor, rec *store.InvocationRecord) OutputHook {
	format, ok := ParserFormat(s.Spec.Format)
	if !ok {
		return nil
	}
	f, err := os.OpenFile(filepath.Join(s.Store.SandboxLogsDir(s.Invocation), "stream.jsonl"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		s.logf("cannot open stream.jsonl: %v; no stream parsing", err)
		return nil
	}
	h := &streamHook{s: s, format: s.Spec.Format, f: f, p: stream.NewParser(format, f),
		stop: make(chan struct{}), done: make(chan struct{}), wrote: -1}
	h.writeStatus() // an empty status.json: readers know a stream is coming
	h.p.SetDir(rec.SandboxPath)
	go h.loop()
	return h
}

// Write never fails: a broken stream.jsonl must not stop the agent.
func (h *streamHook) Write(b []byte) (int, error) { return h.p.Write(b) }

func (h *streamHook) loop() {
	defer close(h.done)
	t := time.NewTicker(StatusInterval)
	defer t.Stop()
	for {
		select {
		case <-h.stop:
			return
		case <-t.C:
			h.writeStatus()
		}
	}
}

// writeStatus rewrites status.json when the stream moved since last time.
func (h *streamHook) writeStatus() {
	h.mu.Lock()
	defer h.mu.Unlock()
	st := h.p.State()
	if st.Events == h.wrote {
		return
	}
	ls := LiveStatus{UpdatedAt: time.Now().UTC(), Format: h.format, State: st, Usage: h.p.Usage()}
	if err := writeVolatile(StatusPath(h.s.Store, h.s.Invocation), ls); err != nil {
		h.s.logf("status.json: %v", err)
		return
	}
	h.wrote = st.Events
}

// Close flushes the parser, writes the last status.json and records the
// final semantic status and usage in meta.json.
func (h *streamHook) Close(rec *store.InvocationRecord) {
	close(h.stop)
	<-h.done
	if err := h.p.Flush(); err != nil {
		h.s.logf("stream.jsonl: %v", err)
	}
	h.f.Close()
	h.writeStatus()
	st, u := h.p.State(), h.p.Usage()
	var rs *stream.RunnerStatus
	if rec != nil {
		rs = TurnRunnerStatus(rec)
	}
	status, summary := Semantic(rs, st, true)
	h.s.update(func(r *store.InvocationRecord) error {
		r.SemanticStatus, r.SemanticSummary = status, summary
		if st.Events > 0 {
			r.Usage = TurnUsage(r.Usage, st, u)
		}
		if st.SessionID != "" {
			r.SessionID = st.SessionID
		}
		return nil
	})
}

// writeVolatile replaces path with v's JSON by a rename (readers never see
// half a file) but without fsync: status.json is a cache, rewritten often,
// whose final values go to meta.json.
func writeVolatile(path string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	tmp := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".tmp")
	if err := os.WriteFile(tmp, append(b, '\n'), 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
