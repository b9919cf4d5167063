package agency

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/git-agency/git-agency/agency/internal/core"
	"github.com/git-agency/git-agency/runner"
	"github.com/git-agency/git-agency/runner/stream"
	"github.com/git-agency/git-agency/store"
)

// The log files of an invocation, in its sandbox's logs/ directory.
const (
	// StreamLog holds the normalised events the supervisor's stream parser
	// writes.
	StreamLog = core.StreamLog
	// RawLog is a headless runner's own stdout.
	RawLog = "raw.jsonl"
	// StderrLog is a headless runner's stderr.
	StderrLog = "stderr.log"
	// SetupLog is the output of agency.setup.
	SetupLog = "setup.log"
)

// LogKind chooses which of an invocation's logs to read.
type LogKind int

const (
	// LogReadable is the normalised stream as readable lines when the
	// runner has one, else the runner's own output.
	LogReadable LogKind = iota
	// LogRaw is the runner's own output (raw.jsonl, or pane.log when headed).
	LogRaw
	// LogStderr is the runner's stderr.
	LogStderr
)

// hasStream tells whether an invocation's output is (or will be) parsed
// into stream.jsonl: a headless run of a runner with a stream format, or
// any run that already has the file.
func (a *App) hasStream(rec *store.InvocationRecord) bool {
	if _, err := os.Stat(filepath.Join(a.Store.SandboxLogsDir(rec.InvocationID), StreamLog)); err == nil {
		return true
	}
	if rec.Mode != store.ModeHeadless || !rec.Active() {
		return false
	}

	spec, err := runner.Lookup(a.Config, rec.Runner)
	if err != nil {
		return false
	}

	_, ok := runner.ParserFormat(spec.Format)
	return ok
}

// rawLog is the runner's own output: raw.jsonl, or pane.log when headed.
func rawLog(rec *store.InvocationRecord) string {
	if rec.Mode == store.ModeHeaded {
		return runner.PaneLog
	}
	return RawLog
}

// logSource is the file kind reads and the writer that turns it into what
// is shown on w. A headed run's pane.log, followed as readable output, is
// drawn without the sequences a terminal would answer or keep (termFilter);
// anything else but LogRaw escaped (TermEscape); LogRaw gives its bytes as
// they are.
func (a *App) logSource(rec *store.InvocationRecord, kind LogKind, w io.Writer) (string, io.Writer) {
	// Agent text is shown with its control characters escaped
	// (TermEscape), except as LogRaw.
	switch {
	case kind == LogStderr:
		return StderrLog, termEscapeWriter(w)
	case kind == LogReadable && a.hasStream(rec):
		return StreamLog, &lineRenderer{w: termEscapeWriter(w)}
	case kind == LogReadable && rec.Mode == store.ModeHeaded:
		return runner.PaneLog, &termFilter{w: w}
	case kind == LogReadable:
		return rawLog(rec), termEscapeWriter(w)
	}

	return rawLog(rec), w
}

// screenTail bounds what CopyScreen reads of a log.
const screenTail = 1 << 20

// CopyScreen writes a headed invocation's screen as plain text (`agent
// logs` of a headed agent): the live pane while it runs, the last screen
// once it ended, else the end of pane.log with every escape sequence
// removed. Never a sequence the user's terminal would answer.
func (a *App) CopyScreen(ctx context.Context, rec *store.InvocationRecord, w io.Writer) {
	var b bytes.Buffer
	(&termFilter{w: &b, text: true}).Write(a.screenText(ctx, rec, screenTail))
	lines := strings.Split(b.String(), "\n")
	for i := range lines {
		lines[i] = strings.TrimRight(lines[i], " ")
	}

	text := strings.TrimRight(strings.Join(lines, "\n"), "\n")
	if text != "" {
		io.WriteString(w, text+"\n")
	}
}

// CopyLogs writes an invocation's log of the given kind to stdout as it
// stands. When that shows nothing but the runner wrote to stderr, the
// stderr goes to stderr, so an agent that failed loudly is never silent.
func (a *App) CopyLogs(rec *store.InvocationRecord, kind LogKind, stdout, stderr io.Writer) {
	dir := a.Store.SandboxLogsDir(rec.InvocationID)
	cw := &countWriter{w: stdout}
	name, w := a.logSource(rec, kind, cw)
	(&tailer{path: filepath.Join(dir, name), w: w}).poll()
	if kind != LogStderr && cw.n == 0 {
		(&tailer{path: filepath.Join(dir, StderrLog), w: termEscapeWriter(stderr)}).poll()
	}
}

// countWriter counts what passes through it.
type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// LogText is the end of an invocation's output as text for a viewer
// (watch's logs view), at most max bytes of each log: the readable events
// (or the runner's own output), then its stderr under a "── stderr.log ──"
// line. A headed run shows its screen: the live pane while it runs, the
// captured last screen once it ended. Escape sequences are left to the
// viewer to strip.
func (a *App) LogText(ctx context.Context, rec *store.InvocationRecord, max int64) string {
	dir := a.Store.SandboxLogsDir(rec.InvocationID)
	var b bytes.Buffer
	if rec.Mode == store.ModeHeaded {
		b.Write(a.screenText(ctx, rec, max))
	} else {
		name, w := a.logSource(rec, LogReadable, &b)
		if data, err := tailFile(filepath.Join(dir, name), max); err == nil {
			_, _ = w.Write(data) // into b, a bytes.Buffer: never fails
		}
	}

	if data, err := tailFile(filepath.Join(dir, StderrLog), max); err == nil && len(data) > 0 {
		if b.Len() > 0 && !bytes.HasSuffix(b.Bytes(), []byte("\n")) {
			b.WriteByte('\n')
		}
		b.WriteString("── " + StderrLog + " ──\n")
		b.Write(data)
	}

	return b.String()
}

// screenText is a headed invocation's screen: captured from its pane while
// it runs, else the screen captured when it ended, else the tail of the
// pane's raw log.
func (a *App) screenText(ctx context.Context, rec *store.InvocationRecord, max int64) []byte {
	if rec.Active() {
		ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		if out, err := tmuxClient().CapturePane(ctx, paneOf(rec)); err == nil {
			return bytes.TrimRight(out, "\n ")
		}
	}

	dir := a.Store.SandboxLogsDir(rec.InvocationID)
	if data, err := tailFile(filepath.Join(dir, runner.ScreenLog), max); err == nil && len(data) > 0 {
		return data
	}

	data, _ := tailFile(filepath.Join(dir, runner.PaneLog), max)
	return data
}

// tailFile reads at most n bytes from the end of path, from a line start.
func tailFile(path string, n int64) ([]byte, error) {
	f, err := store.ReadLog(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}

	off := int64(0)
	if fi.Size() > n {
		off = fi.Size() - n
	}

	if _, err := f.Seek(off, io.SeekStart); err != nil {
		return nil, err
	}

	data, err := io.ReadAll(io.LimitReader(f, n))
	if err != nil {
		return nil, err
	}

	if off > 0 {
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			data = data[i+1:]
		}
	}

	return data, nil
}

// tailer copies what was appended to a file since the last poll.
type tailer struct {
	path string
	w    io.Writer
	off  int64
}

func (t *tailer) poll() int {
	f, err := store.ReadLog(t.path)
	if err != nil {
		return 0
	}
	defer f.Close()
	if _, err := f.Seek(t.off, io.SeekStart); err != nil {
		return 0
	}

	n, _ := io.Copy(t.w, f)
	t.off += n
	return int(n)
}

// renderEvent is one stream.jsonl line as a readable line:
// "15:04:05 tool_call    Write hello.txt". Lines that do not decode are
// shown as they are.
func renderEvent(line []byte) string {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return ""
	}

	var ev stream.Event
	if err := json.Unmarshal(line, &ev); err != nil || ev.Kind == "" {
		return string(line) + "\n"
	}

	sum := ev.Summary
	if ev.Kind == stream.KindMessage && sum == "" {
		return ""
	}

	if ev.Kind == stream.KindResult || ev.Kind == stream.KindTurnEnd {
		if u := ev.Usage; u != nil && ev.Kind == stream.KindResult {
			sum += "  [" + usageText(u.InputTokens, u.OutputTokens, u.CostUSD) + "]"
		}
	}

	t := "--:--:--"
	if !ev.Time.IsZero() {
		t = ev.Time.Local().Format("15:04:05")
	}

	return fmt.Sprintf("%s %-13s %s\n", t, ev.Kind, strings.TrimSpace(sum))
}

// usageText is a result's usage, the conversation's so far: "total 20 in /
// 10 out tokens, $0.0004". It gives no turn count: the runner's own
// (claude's num_turns counts model requests) is not the conversation's
// turns that `agent show` gives.
func usageText(in, out int64, cost *float64) string {
	s := fmt.Sprintf("total %d in / %d out tokens", in, out)
	if cost != nil {
		s += fmt.Sprintf(", $%.4f", *cost)
	}
	return s
}

// lineRenderer turns whole stream.jsonl lines written to it into readable
// lines on w, holding back a partial last line until its newline arrives.
type lineRenderer struct {
	w   io.Writer
	buf []byte
}

func (r *lineRenderer) Write(p []byte) (int, error) {
	r.buf = append(r.buf, p...)
	for {
		i := bytes.IndexByte(r.buf, '\n')
		if i < 0 {
			break
		}

		if s := renderEvent(r.buf[:i]); s != "" {
			if _, err := io.WriteString(r.w, s); err != nil {
				r.buf = nil
				return len(p), err
			}
		}

		r.buf = r.buf[i+1:]
	}

	if len(r.buf) == 0 {
		r.buf = nil
	}

	return len(p), nil
}
