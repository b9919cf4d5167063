package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/git-agency/git-agency/agency"
	"github.com/git-agency/git-agency/runner"
	"github.com/git-agency/git-agency/runner/stream"
	"github.com/git-agency/git-agency/store"
)

// streamLog is logs/stream.jsonl, the normalised events the supervisor's
// stream parser writes.
const streamLog = "stream.jsonl"

// hasStream tells whether an invocation's output is (or will be) parsed
// into stream.jsonl: a headless run of a runner with a stream format, or
// any run that already has the file.
func hasStream(a *agency.App, rec *store.InvocationRecord) bool {
	if _, err := os.Stat(filepath.Join(a.Store.SandboxLogsDir(rec.InvocationID), streamLog)); err == nil {
		return true
	}
	if rec.Mode != store.ModeHeadless || !agency.Active(rec) {
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
		return "pane.log"
	}
	return "raw.jsonl"
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
			sum += "  [" + usageText(u.Turns, u.InputTokens, u.OutputTokens, u.CostUSD) + "]"
		}
	}
	t := "--:--:--"
	if !ev.Time.IsZero() {
		t = ev.Time.Local().Format("15:04:05")
	}
	return fmt.Sprintf("%s %-13s %s\n", t, ev.Kind, strings.TrimSpace(sum))
}

// usageText is a usage summary: "2 turns, 20 in / 10 out tokens, $0.0004".
func usageText(turns int, in, out int64, cost *float64) string {
	s := fmt.Sprintf("%d turns, %d in / %d out tokens", turns, in, out)
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
			io.WriteString(r.w, s)
		}
		r.buf = r.buf[i+1:]
	}
	if len(r.buf) == 0 {
		r.buf = nil
	}
	return len(p), nil
}
