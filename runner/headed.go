package runner

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/git-agency/git-agency/runner/tmux"
	"github.com/git-agency/git-agency/store"
)

// PaneLog and ScreenLog are a headed invocation's logs: the pane's output as
// tmux saw it (with escape sequences), and the final screen capture.
const (
	PaneLog   = "pane.log"
	ScreenLog = "screen.txt"
)

// headedPoll is how often the supervisor looks at its pane.
const headedPoll = 200 * time.Millisecond

// SessionName is the tmux session of a headed invocation.
func SessionName(inv string) string { return "agency-" + inv }

var envNameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// tmuxCallWait bounds each tmux call of a headed run's supervisor.
const tmuxCallWait = 10 * time.Second

// tmuxEnv is what a headed runner gets: the agent environment, except the
// variables that would tie tmux to another server or pane.
func tmuxEnv(rec *store.InvocationRecord) []string {
	var out []string
	for _, kv := range agentEnv(rec) {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "TMUX", "TMUX_PANE", "_":
			continue
		}

		if !envNameRE.MatchString(k) || strings.ContainsAny(kv, "\x00") {
			continue // tmux -e takes only NAME=VALUE with a shell-like NAME
		}

		out = append(out, kv)
	}

	return out
}

// runHeaded runs the invocation's program in a detached tmux session on the
// user's default server, with the pane kept after exit (remain-on-exit) so
// its exit status can be read, then captures the screen and removes the
// session.
func runHeaded(ctx context.Context, s *Supervisor, rec *store.InvocationRecord) error {
	// Every call bounded: a tmux server that stops answering must not stop
	// the poll that enforces the run's timeouts and notices its end.
	client := &tmux.Client{CallTimeout: tmuxCallWait}

	if _, err := tmux.Available(); err != nil {
		return s.failEarly("tmux is not installed", store.ExitUnknown)
	}

	name := SessionName(rec.InvocationID)
	if rec.TmuxSession != nil && *rec.TmuxSession != "" {
		name = *rec.TmuxSession
	}
	if cur, err := s.Store.ReadInvocation(s.Invocation); err == nil && cur.StopRequested != "" {
		return s.failEarly("stopped before the runner started", cur.StopRequested)
	}

	logs := s.Store.SandboxLogsDir(s.Invocation)
	if err := os.MkdirAll(logs, 0o700); err != nil {
		return s.failEarly("cannot create logs: "+err.Error(), store.ExitUnknown)
	}

	logPath := filepath.Join(logs, PaneLog)
	if f, err := store.OpenLog(logPath, os.O_APPEND); err == nil {
		f.Close()
	} else {
		return s.failEarly("cannot open "+PaneLog+": "+err.Error(), store.ExitUnknown)
	}

	paneStart, hookStart := s.followUpStart(rec, logPath)
	began := time.Now()
	opts, err := s.headedSession(rec, name, logPath)
	if err != nil {
		return s.failEarly(err.Error(), store.ExitUnknown)
	}

	sess, err := client.NewSession(ctx, opts)
	if err != nil {
		return s.failEarly("cannot start the tmux session: "+err.Error(), store.ExitUnknown)
	}

	s.update(func(r *store.InvocationRecord) error {
		r.Status = store.StatusRunning
		r.TmuxSession = store.Str(name)
		r.TmuxPane = sess.PaneID
		r.PID = nil
		return nil
	})
	s.event("started", map[string]any{"tmux_session": name, "pane": sess.PaneID, "command": rec.Command, "mode": store.ModeHeaded})
	s.logf("runner started in tmux session %s (pane %s, pid %d)", name, sess.PaneID, sess.PanePID)
	stopTasks := s.startTasks(ctx, rec)

	hw := newHeadedWatch(s, client, sess.PaneID, rec, began)
	hw.paneOff, hw.hookOff = paneStart, hookStart
	code, reason := waitPane(ctx, s, client, sess, hw)
	s.noteExit()
	s.stopLeftovers(rec)
	stopTasks()
	s.finishHeaded(hw, rec)
	return s.finishWith(code, reason)
}

// followUpStart is where a follow-up turn (agent send) starts watching
// pane.log and hook.jsonl: after what the earlier turns left there (0, 0
// for a first turn). It also removes status.json, which still says how the
// earlier turn ended (waiting at its prompt): read now, it would show and
// notify a wait that is over. This turn publishes its own once the agent
// reports.
func (s *Supervisor) followUpStart(rec *store.InvocationRecord, panePath string) (paneStart, hookStart int64) {
	if rec.Turns <= 1 {
		return 0, 0
	}
	if fi, err := os.Stat(panePath); err == nil {
		paneStart = fi.Size()
	}
	if fi, err := os.Stat(HookPath(s.Store, s.Invocation)); err == nil {
		hookStart = fi.Size()
	}
	if err := os.Remove(statusPath(s.Store, s.Invocation)); err != nil && !os.IsNotExist(err) {
		s.logf("status.json: %v", err)
	}

	return paneStart, hookStart
}

// finishHeaded records what the agent's own reports say about the ended
// run: its semantic status, session id and usage.
func (s *Supervisor) finishHeaded(hw *headedWatch, rec *store.InvocationRecord) {
	status, summary, session, usage := hw.final(rec)
	if status == "" && session == "" && usage == nil {
		return
	}

	s.update(func(r *store.InvocationRecord) error {
		if status != "" {
			r.SemanticStatus, r.SemanticSummary = status, summary
		}
		if session != "" {
			r.SessionID = session
		}

		if usage != nil {
			// The conversation's prompts, as the record counts them; a
			// prompt typed into the pane directly counts too.
			r.Turns = max(r.Turns, usage.Turns, 1)
			usage.Turns = r.Turns
			r.Usage = usage
		}

		return nil
	})
}

// waitPane polls the pane until its program is dead (then captures the
// screen and kills the session) or the session vanished behind our back.
// A stop asked for (agent stop, a timeout, a supervisor told to stop with
// SIGTERM) ends the agent in steps (paneStop); idle is measured on
// pane.log. Every poll also follows the agent's own reports (hw). tmux
// calls never use the cancelled context.
func waitPane(ctx context.Context, s *Supervisor, client *tmux.Client, sess tmux.Session, hw *headedWatch) (*int, string) {
	bg := context.WithoutCancel(ctx)
	stop := &paneStop{s: s, client: client, sess: sess, began: time.Now(), hw: hw}
	gone := 0
	for {
		stop.poll(ctx)
		st, err := client.PaneState(bg, sess.PaneID)
		if err != nil {
			if errors.Is(err, tmux.ErrNotFound) || errors.Is(err, tmux.ErrNoServer) {
				// Killed by `agent kill`, the last step of a stop, the
				// user, or a server restart: the exit status is lost.
				// Look twice to be sure.
				gone++
				if gone >= 2 {
					s.logf("tmux session %s is gone", sess.Name)
					return nil, store.ExitExited
				}
			} else {
				s.logf("pane state: %v", err)
			}
		} else if st.Dead {
			CaptureScreen(bg, client, sess.PaneID, filepath.Join(s.Store.SandboxLogsDir(s.Invocation), ScreenLog))
			client.KillSession(bg, sess.Name)
			return DeadStatus(st)
		} else {
			gone = 0

			if !st.Closed && !st.Piped {
				// tmux's pipe to pane.log ended while the agent runs: its
				// `cat` failed (a full disk) or was killed. What the pane
				// shows from now on is missing from the log.
				s.logWriteFailed(PaneLog, errors.New("the pipe from the tmux pane to the log ended (disk full?)"))
			}

			hw.tick(bg)
		}

		time.Sleep(headedPoll)
	}
}

// DeadStatus maps a dead pane to (exit code, reason).
func DeadStatus(st tmux.PaneState) (*int, string) {
	switch {
	case st.HasStatus:
		return store.Int(st.ExitStatus), store.ExitExited
	case st.HasSignal:
		reason := store.ExitExited
		switch st.Signal {
		case 9:
			reason = store.ExitKilled
		case 2, 15:
			reason = store.ExitStopped
		}
		return store.Int(128 + st.Signal), reason
	}

	return nil, store.ExitExited
}

// CaptureScreen saves the pane's whole history and screen (best effort).
func CaptureScreen(ctx context.Context, client *tmux.Client, target, path string) {
	if out, err := client.CapturePane(ctx, target); err == nil {
		store.WriteFileAtomic(path, out, 0o600)
	}
}

// headedSession is the tmux session a headed invocation runs in: its
// command walled when the record says so (see Supervisor.walled).
func (s *Supervisor) headedSession(rec *store.InvocationRecord, name, logPath string) (tmux.SessionOptions, error) {
	argv, err := s.walledInPane(rec, rec.Command)
	return tmux.SessionOptions{
		Name: name, Dir: rec.SandboxPath, Argv: argv, Env: tmuxEnv(rec),
		Width: rec.WindowWidth, Height: rec.WindowHeight, LogPath: logPath,
	}, err
}
