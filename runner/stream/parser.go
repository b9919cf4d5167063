package stream

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"sync"
	"time"
)

// Runner stream formats accepted by NewParser.
const (
	FormatClaude = "claude"
	FormatCodex  = "codex"
	FormatAuto   = "" // decide per line from its "type"
)

// maxLineBytes bounds the memory one line may hold. A longer line becomes a
// single unknown event and the rest of it is skipped.
const maxLineBytes = 1 << 20

// Parser is an incremental parser of a runner's stdout. Feed it with Write
// as chunks arrive and call Flush at EOF. It is safe for one writer and any
// number of concurrent State and Usage callers.
type Parser struct {
	mu       sync.Mutex
	format   string
	w        io.Writer
	now      func() time.Time
	buf      []byte // the current, incomplete line
	skipping bool   // inside an overlong line, dropping bytes until '\n'
	line     int64
	state    StreamState
	usage    Usage
	tools    map[string]string // claude tool_use id → tool name, until its result
	tasks    map[string]string // claude Task tool_use id → the subagent's description
	// lastMsgID is the claude message whose usage was counted last (one
	// message spans several lines).
	lastMsgID string
	// denied counts claude's permission_denied lines since the last result.
	denied int
	errBuf []byte       // the current, incomplete stderr line
	cwd    string       // the runner's working directory, once known
	err    error        // first error writing to w
	out    bytes.Buffer // encoding buffer, reused
}

// NewParser returns a parser for format ("claude", "codex", or "" to detect
// each line's format from its type) that writes one JSON event per line to
// w. w may be nil.
func NewParser(format string, w io.Writer) *Parser {
	return &Parser{format: format, w: w, now: time.Now, tools: map[string]string{}, tasks: map[string]string{}}
}

// SetDir tells the parser the runner's working directory, so summaries
// show paths inside it relative to it (codex never prints its cwd; claude's
// system/init replaces it).
func (p *Parser) SetDir(dir string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cwd = dir
}

// Continue starts the account from the usage of earlier runs of the same
// conversation (a resumed one appends to their stream.jsonl), so that live
// usage is the conversation's total before this run prints its own.
func (p *Parser) Continue(u Usage) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.usage = u
}

// setClock replaces time.Now as the source of event times (for tests).
func (p *Parser) setClock(now func() time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.now = now
}

// Write consumes a chunk of runner stdout. It always reports len(b), nil so
// that a tee in front of it never stops copying the agent's output; a
// failure to write stream.jsonl is kept for writeErr.
func (p *Parser) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := len(b)
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if p.skipping {
			if i < 0 {
				return n, nil
			}
			p.skipping = false
			b = b[i+1:]
			continue
		}

		if i < 0 {
			p.appendPartial(b)
			return n, nil
		}

		if len(p.buf)+i > maxLineBytes {
			p.overlong()
			b = b[i+1:]
			continue
		}

		if len(p.buf) == 0 {
			p.handleLine(b[:i])
		} else {
			p.buf = append(p.buf, b[:i]...)
			p.handleLine(p.buf)
			p.buf = p.buf[:0]
		}

		b = b[i+1:]
	}

	return n, nil
}

// appendPartial keeps the start of a line that has no newline yet, switching
// to skipping mode once it grows past maxLineBytes.
func (p *Parser) appendPartial(b []byte) {
	if len(p.buf)+len(b) > maxLineBytes {
		p.overlong()
		p.skipping = true
		return
	}
	p.buf = append(p.buf, b...)
}

// overlong records a line longer than maxLineBytes and frees its buffer.
func (p *Parser) overlong() {
	p.line++
	p.buf = nil
	p.emit(Event{Kind: KindUnknown, SourceType: "overlong",
		Summary: fmt.Sprintf("line longer than %d bytes skipped", maxLineBytes)})
}

// Flush parses a final line that had no trailing newline. Call it at EOF.
func (p *Parser) Flush() error {
	p.mu.Lock()
	defer p.mu.Unlock()

	if p.skipping {
		p.skipping = false
	} else if len(p.buf) > 0 {
		p.handleLine(p.buf)
	}

	p.buf = nil
	if len(p.errBuf) > 0 {
		p.stderrLine(string(p.errBuf))
		p.errBuf = nil
	}

	return p.err
}

// Stderr returns a writer for the runner's stderr. Runners report some
// things only there (codex: a patch or command its sandbox or approval
// policy rejected); those lines become events, the rest is ignored. Like
// Write, it never fails.
func (p *Parser) Stderr() io.Writer { return stderrWriter{p} }

type stderrWriter struct{ p *Parser }

func (w stderrWriter) Write(b []byte) (int, error) {
	p := w.p
	p.mu.Lock()
	defer p.mu.Unlock()
	n := len(b)
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			if len(p.errBuf)+len(b) <= 64<<10 {
				p.errBuf = append(p.errBuf, b...)
			}
			return n, nil
		}

		line := append(p.errBuf, b[:i]...)
		p.stderrLine(string(line))
		p.errBuf = p.errBuf[:0]
		b = b[i+1:]
	}

	return n, nil
}

// stderrLine turns one stderr line into events, if it is one the format
// knows.
func (p *Parser) stderrLine(line string) {
	if p.format != FormatClaude {
		if ev, ok := codexStderr(line); ok {
			p.emitAt(ev, 0)
		}
	}
}

// writeErr reports the first error writing events, if any.
func (p *Parser) writeErr() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.err
}

// State returns what status derivation needs to know about the stream so far.
func (p *Parser) State() StreamState {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.state
}

// Usage returns the token and cost account so far.
func (p *Parser) Usage() Usage {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.usage
}

// handleLine parses one complete line (without its newline).
func (p *Parser) handleLine(line []byte) {
	p.line++
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return
	}

	var head struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal(line, &head); err != nil || line[0] != '{' {
		p.emit(Event{Kind: KindUnknown, SourceType: "malformed", Summary: "malformed line: " + cut(oneLine(string(line)), 80)})
		return
	}

	format := p.format
	if format == FormatAuto {
		format = detect(head.Type)
	}

	var evs []Event
	switch format {
	case FormatClaude:
		evs = p.claude(head.Type, line)
	case FormatCodex:
		evs = p.codex(head.Type, line)
	}

	if evs == nil {
		evs = []Event{unknown(head.Type)}
	}

	for _, ev := range evs {
		p.emit(ev)
	}
}

// skip is returned by the format handlers for a line that is understood but
// produces no event (for example claude's partial stream_event chunks).
var skip = []Event{}

func unknown(typ string) Event {
	if typ == "" {
		typ = "(no type)"
	}
	return Event{Kind: KindUnknown, SourceType: typ, Summary: "unknown event type " + typ}
}

// detect guesses a line's format from its type.
func detect(typ string) string {
	switch typ {
	case "system", "assistant", "user", "result", "stream_event":
		return FormatClaude
	case "thread.started", "turn.started", "turn.completed", "turn.failed",
		"item.started", "item.updated", "item.completed", "error":
		return FormatCodex
	}
	return ""
}

// emit stamps, folds and writes one event of the current stdout line.
func (p *Parser) emit(ev Event) { p.emitAt(ev, p.line) }

// emitAt stamps, folds and writes one event; line 0 means not from stdout.
func (p *Parser) emitAt(ev Event, line int64) {
	ev.Time = p.now().Round(0) // no monotonic reading: it does not survive JSON
	ev.Line = line
	ev.Summary = oneLine(ev.Summary)
	p.state.apply(ev, &p.usage)

	if p.w == nil || p.err != nil {
		return
	}

	p.out.Reset()
	enc := json.NewEncoder(&p.out)
	enc.SetEscapeHTML(false) // keep "$ a > b" readable

	if err := enc.Encode(ev); err != nil {
		p.err = err
		return
	}

	if _, err := p.w.Write(p.out.Bytes()); err != nil {
		p.err = err
	}
}
