package runner

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/git-agency/git-agency/runner/stream"
	"github.com/git-agency/git-agency/store"
)

// statusFile is logs/status.json: the stream's state and usage, rewritten
// (atomically, at most every statusInterval) by the supervisor while the
// runner runs. Readers (ls, show, watch) take the live semantic status from
// it instead of parsing logs, and the supervisor never takes the repository
// lock for it: meta.json is only rewritten with the final values at exit.
const statusFile = "status.json"

// statusInterval bounds how often status.json is rewritten.
const statusInterval = 250 * time.Millisecond

// LiveStatus is the content of logs/status.json.
type LiveStatus struct {
	UpdatedAt time.Time `json:"updated_at"`
	Format    string    `json:"format"`
	// SessionID is the runner's conversation id, once it printed it.
	SessionID string             `json:"session_id,omitempty"`
	State     stream.StreamState `json:"state"`
	Usage     stream.Usage       `json:"usage"`
}

// statusPath is an invocation's logs/status.json.
func statusPath(st *store.Store, inv string) string {
	return filepath.Join(st.SandboxLogsDir(inv), statusFile)
}

// ReadLiveStatus reads logs/status.json; nil when there is none (a runner
// without a stream format, a headed run) or it cannot be read.
func ReadLiveStatus(st *store.Store, inv string) *LiveStatus {
	// Decoded again only when the file changed: watch asks every
	// second for every running invocation.
	v, err := st.ReadFileMemo(statusPath(st, inv), func(b []byte) (any, error) {
		var ls LiveStatus
		if err := json.Unmarshal(b, &ls); err != nil {
			return nil, err
		}
		return &ls, nil
	})
	if err != nil {
		return nil
	}

	ls := *v.(*LiveStatus)
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

// UsageRecord converts the stream's usage to the record's. Its turns are
// the conversation's, the prompts the record counts (turns: start and each
// send), not the runner's own count (claude's num_turns counts model
// requests), so `show` never gives two different turn counts.
func UsageRecord(u stream.Usage, turns int) *store.Usage {
	return &store.Usage{Turns: max(turns, 1), InputTokens: u.InputTokens, OutputTokens: u.OutputTokens,
		CachedInputTokens: u.CachedInputTokens, ReasoningTokens: u.ReasoningTokens, CostUSD: u.CostUSD}
}

// Exit is what the supervisor knows of how a run ended, for semanticStatus.
type Exit struct {
	// TimedOut says which limit stopped the run ("timeout 30m", "no
	// output for 5m"); empty if none did.
	TimedOut string
	// Unchanged is set when the sandbox holds nothing new (HEAD is the
	// base commit and the tree is clean); only looked at after a denial.
	Unchanged bool
}

// semanticStatus is the semantic layer of an invocation's status (what the agent
// is up to, beside its lifecycle). While the run goes (end nil): the runner's own
// runner_status.json when valid, else what the stream says: "error" (a
// failed result or turn), "needs_input" (a turn that ended waiting for the
// user), else "" with the latest summary. After it ended, the stream's
// final word wins over whatever runner_status.json was left behind:
// a timeout or a stream error is "error"; a denied tool call "blocked"
// when nothing changed (the run did none of its work: not ready to land),
// else "needs_input", like a closing question (so a run whose work was
// refused never looks clean); a clean end "ready_for_review".
// runner_status.json only speaks for a stream that said nothing final.
func semanticStatus(rs *stream.RunnerStatus, st stream.StreamState, end *Exit) (status, summary string) {
	last := st.LastMessage
	if last == "" {
		last = st.LastSummary
	}

	validRS := rs != nil && rs.Valid()
	if end == nil && validRS {
		return rs.Status, orElse(rs.Summary, last)
	}

	switch {
	case end != nil && end.TimedOut != "":
		// What it was doing when it was stopped: the latest event.
		return stream.StatusError, "timed out (" + end.TimedOut + ")" + prefixed(": ", st.LastSummary)
	case st.ResultIsError || st.TurnFailed:
		return stream.StatusError, orElse(st.LastError, "the agent reported an error")
	case end != nil && st.Denials > 0 && end.Unchanged:
		return stream.StatusBlocked, "nothing changed: " + st.LastDenial
	case end != nil && st.Denials > 0:
		return stream.StatusNeedsInput, st.LastDenial + prefixed("; then: ", last)
	case st.WaitingForUser:
		return stream.StatusNeedsInput, st.LastSummary
	case end != nil && st.Ended():
		return stream.StatusReadyForReview, last
	case end != nil && validRS:
		return rs.Status, orElse(rs.Summary, last)
	}

	return "", last
}

func orElse(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// prefixed is sep+s, or "" when s is empty.
func prefixed(sep, s string) string {
	if s == "" {
		return ""
	}
	return sep + s
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

	path := filepath.Join(s.Store.SandboxLogsDir(s.Invocation), "stream.jsonl")

	// A resumed conversation appends to the stream of its earlier runs:
	// their usage is where this run's account starts.
	var prev stream.Usage
	// (Its logs directory is the agent's: each file is opened without
	// following a link, and only a regular file; one that is not is left
	// unparsed.)
	if old, err := store.ReadLog(path); err == nil {
		_, prev, _ = stream.LoadState(old)
		old.Close()
	}

	// An earlier turn's supervisor killed mid-line: this turn starts on
	// a line of its own.
	if err := store.StartFreshLine(path); err != nil {
		s.logf("stream.jsonl: %v", err)
	}

	f, err := store.OpenLog(path, os.O_APPEND)
	if err != nil {
		s.logf("cannot open stream.jsonl: %v; no stream parsing", err)
		return nil
	}

	h := &streamHook{s: s, format: s.Spec.Format, f: f, p: stream.NewParser(format, f),
		stop: make(chan struct{}), done: make(chan struct{}), wrote: -1}
	h.p.Continue(prev)
	h.writeStatus() // an empty status.json: readers know a stream is coming
	h.p.SetDir(rec.SandboxPath)
	go h.loop()
	return h
}

// Write never fails: a broken stream.jsonl must not stop the agent.
func (h *streamHook) Write(b []byte) (int, error) { return h.p.Write(b) }

// Stderr receives the runner's stderr, where some runners report what their
// JSONL leaves out (codex's rejected patches and commands).
func (h *streamHook) Stderr() io.Writer { return h.p.Stderr() }

func (h *streamHook) loop() {
	defer close(h.done)
	t := time.NewTicker(statusInterval)
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

	ls := LiveStatus{UpdatedAt: time.Now().UTC(), Format: h.format, SessionID: st.SessionID, State: st, Usage: h.p.Usage()}
	if err := writeVolatile(statusPath(h.s.Store, h.s.Invocation), ls); err != nil {
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
	end := &Exit{TimedOut: h.s.timeoutReason()}
	var rs *stream.RunnerStatus
	if rec != nil {
		rs = TurnRunnerStatus(rec)
		if st.Denials > 0 {
			end.Unchanged = h.s.unchanged(rec)
		}
	}

	status, summary := semanticStatus(rs, st, end)
	h.s.update(func(r *store.InvocationRecord) error {
		r.SemanticStatus, r.SemanticSummary = status, summary
		if st.Events > 0 {
			r.Usage = UsageRecord(u, r.Turns)
		}
		if st.SessionID != "" {
			r.SessionID = st.SessionID
		}
		return nil
	})
}

// unchanged reports whether the sandbox holds nothing new: HEAD is still
// the base commit and the tree is clean. Any doubt (an error) counts as
// changed.
func (s *Supervisor) unchanged(rec *store.InvocationRecord) bool {
	if s.Repo == nil || rec.BaseCommit == "" {
		return false
	}

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	t := s.Repo.Tree(rec.SandboxPath)
	head, err := t.Head(ctx)
	if err != nil || head != rec.BaseCommit {
		return false
	}

	dirty, err := t.IsDirty(ctx)
	return err == nil && !dirty
}

// writeVolatile replaces path with v's JSON by a rename (readers never see
// half a file) but without fsync: status.json is a cache, rewritten often,
// whose final values go to meta.json. Each write has a temp file of its own
// (".<name>.tmp-<random>", which gc knows), so two writers never rename
// each other's half-written file.
func writeVolatile(path string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}

	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*") // 0600
	if err != nil {
		return err
	}

	tmp := f.Name()
	_, err = f.Write(append(b, '\n'))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}

	if err != nil {
		os.Remove(tmp) // a full disk leaves a partial temp file
		return err
	}

	return nil
}
