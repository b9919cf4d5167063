package agency

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/git-agency/git-agency/errs"
	"github.com/git-agency/git-agency/store"
)

// FollowOptions say where Follow writes and how it reacts.
type FollowOptions struct {
	// Stdout gets the agent's output; Stderr its stderr, the setup's
	// output and Follow's own notes.
	Stdout io.Writer
	Stderr io.Writer
	// Kind is LogReadable (readable events when the runner has a stream)
	// or LogRaw.
	Kind LogKind
	// Interrupts, when set, stops the agent on the first value and kills
	// it on the second; values closer than a second count as one (run as
	// `git agency`, one Ctrl-C arrives from the terminal and again from
	// git).
	Interrupts <-chan os.Signal
	// Poll is how often the logs are read (default 100ms).
	Poll time.Duration
	// From holds, by log name, where to start reading (0 when absent):
	// agent send follows only its own turn (SendResult.LogSizes).
	From map[string]int64
}

// ErrOutputClosed is what Follow returns when its Stdout was closed by the
// reader (EPIPE, as with `| head -1`): following stops, the agent runs on.
var ErrOutputClosed = errors.New("output closed")

// pipeWriter remembers that a write failed because the reader is gone.
type pipeWriter struct {
	w      io.Writer
	closed bool
}

func (p *pipeWriter) Write(b []byte) (int, error) {
	n, err := p.w.Write(b)
	if errors.Is(err, syscall.EPIPE) {
		p.closed = true
	}
	return n, err
}

// Follow copies an invocation's output to the streams as it is written,
// until the invocation has ended and all of it is copied, and returns the
// final record. It then says on Stderr why the run ended when the output
// may not: a recorded error, or a timeout. When ctx ends first, Follow
// returns ctx's error and the agent runs on; when Stdout is closed
// (EPIPE) it returns ErrOutputClosed and the agent runs on too.
func (a *App) Follow(ctx context.Context, inv string, o FollowOptions) (*store.InvocationRecord, error) {
	rec, err := a.readRecord(inv)
	if err != nil {
		return nil, err
	}

	poll := o.Poll
	if poll <= 0 {
		poll = 100 * time.Millisecond
	}

	logs := a.Store.SandboxLogsDir(inv)
	out := &pipeWriter{w: o.Stdout}
	name, w := a.logSource(rec, o.Kind, out)
	errW := o.Stderr
	if o.Kind != LogRaw {
		errW = termEscapeWriter(errW)
	}

	tails := []*tailer{
		{path: filepath.Join(logs, SetupLog), w: errW, off: o.From[SetupLog]},
		{path: filepath.Join(logs, name), w: w, off: o.From[name]},
		{path: filepath.Join(logs, StderrLog), w: errW, off: o.From[StderrLog]},
	}
	pollAll := func() int {
		n := 0
		for _, t := range tails {
			n += t.poll()
		}
		return n
	}
	interrupts := 0
	var lastInterrupt time.Time
	for {
		n := pollAll()

		if out.closed {
			return rec, ErrOutputClosed
		}

		rec, err := a.readRecord(inv)
		if err != nil {
			return nil, err
		}

		rec = a.View(ctx, rec)
		if !rec.Active() && n == 0 {
			pollAll()
			a.writeEndNotes(o.Stderr, rec)
			return rec, nil
		}

		select {
		case <-o.Interrupts:
			if time.Since(lastInterrupt) < time.Second {
				continue
			}

			lastInterrupt = time.Now()
			interrupts++
			kill := interrupts > 1
			if kill {
				fmt.Fprintln(o.Stderr, "killing the agent…")
			} else {
				fmt.Fprintln(o.Stderr, "stopping the agent… (Ctrl-C again to kill it)")
			}

			if _, err := a.Stop(ctx, rec, kill, 0); err != nil && !errs.Is(err, errs.ENotRunning) {
				return nil, err
			}
		case <-ctx.Done():
			return rec, ctx.Err()
		case <-time.After(poll):
		}
	}
}

func (a *App) readRecord(inv string) (*store.InvocationRecord, error) {
	rec, err := a.Store.ReadInvocation(inv)
	if err != nil {
		return nil, errs.StoreCorrupt(a.Store.InvocationMetaPath(inv), err)
	}
	return rec, nil
}

// writeEndNotes says why a followed run ended when its output may not: a
// setup or start failure, a supervisor that died, a timeout.
func (a *App) writeEndNotes(w io.Writer, rec *store.InvocationRecord) {
	if rec.Error != "" {
		fmt.Fprintf(w, "agent %s: %s\n", rec.InvocationID, rec.Error)
	}
	if store.Deref(rec.ExitReason) == store.ExitTimeout {
		fmt.Fprintf(w, "agent %s: stopped by a timeout (%s)\n", rec.InvocationID, a.timeoutReason(rec.InvocationID))
	}
}

// timeoutReason is the reason of the invocation's timeout event ("timeout
// 10m", "no output for 2m"), or the settings that set one.
func (a *App) timeoutReason(inv string) string {
	events, _ := a.Store.ReadEvents(inv)
	for i := len(events) - 1; i >= 0; i-- {
		if events[i].Event == "timeout" {
			if r, ok := events[i].Data["reason"].(string); ok && r != "" {
				return r
			}
		}
	}

	return "agency.timeout or agency.idleTimeout"
}
