package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"syscall"
	"time"

	"github.com/git-agency/git-agency/errs"
	"github.com/git-agency/git-agency/gitcore"
	"github.com/git-agency/git-agency/internal/subproc"
	"github.com/git-agency/git-agency/runner/stream"
	"github.com/git-agency/git-agency/store"
)

// Notification events (agency.notify.command's stdin "event").
const (
	NotifyNeedsInput = "needs_input"
	NotifyFinished   = "finished"
	NotifyFailed     = "failed"
)

// NotifyTimeout bounds a notify command unless agency.notify.timeout says
// otherwise.
const NotifyTimeout = 10 * time.Second

// Notification is the JSON object a notify command gets on stdin.
type Notification struct {
	Event         string `json:"event"`
	InvocationID  string `json:"invocation_id"`
	Worktree      string `json:"worktree"`
	Runner        string `json:"runner"`
	DisplayStatus string `json:"display_status"`
	Summary       string `json:"summary"`
	Time          string `json:"time"`
}

// NotifyTimeoutFromConfig reads agency.notify.timeout (unset or 0:
// NotifyTimeout); a value that is not a duration is E_CONFIG.
func NotifyTimeoutFromConfig(cfg *gitcore.Config) (time.Duration, error) {
	timeout, ok := cfg.Duration("agency.notify.timeout", NotifyTimeout)
	if !ok {
		v, _ := cfg.Get("agency.notify.timeout")
		return 0, errs.Config("agency.notify.timeout", v, "a duration such as 10s")
	}
	if timeout == 0 {
		timeout = NotifyTimeout
	}
	return timeout, nil
}

// notify runs agency.notify.command (if set) for an event, in the
// background: through /bin/sh -c like core.editor, in the sandbox, with the
// Notification on stdin and AGENCY_EVENT / AGENCY_INVOCATION_ID set. It is
// bounded by agency.notify.timeout (its process group is killed then) and
// never blocks the agent; a failure is recorded in events.jsonl
// (notify_failed). waitNotify waits for the ones still running.
func (s *Supervisor) notify(event, display, summary string) {
	if s.Config == nil {
		return
	}

	command, ok := s.Config.Get("agency.notify.command")
	if !ok || command == "" {
		return
	}

	timeout, err := NotifyTimeoutFromConfig(s.Config)
	if err != nil {
		timeout = NotifyTimeout // agent start refused it; the config changed since
	}

	rec, err := s.Store.ReadInvocation(s.Invocation)
	if err != nil {
		s.logf("notify: %v", err)
		return
	}

	n := Notification{Event: event, InvocationID: rec.InvocationID, Worktree: rec.IntegrationWorktreeID,
		Runner: rec.Runner, DisplayStatus: display, Summary: summary, Time: now()}
	if wt, err := s.Store.ReadWorktree(rec.IntegrationWorktreeID); err == nil && wt.Name != "" {
		n.Worktree = wt.Name
	}

	s.notifyWG.Add(1)
	go func() {
		defer s.notifyWG.Done()
		if err := RunNotify(context.Background(), command, n, rec, timeout); err != nil {
			s.logf("notify %s: %v", event, err)
			s.event("notify_failed", map[string]any{"notify_event": event, "error": err.Error()})
		}
	}()
}

// waitNotify waits for the notify commands still running (each is bounded
// by its timeout).
func (s *Supervisor) waitNotify() { s.notifyWG.Wait() }

// RunNotify runs one notify command and waits for it (at most timeout).
func RunNotify(ctx context.Context, command string, n Notification, rec *store.InvocationRecord, timeout time.Duration) error {
	body, err := json.Marshal(n)
	if err != nil {
		return err
	}

	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", command)
	// It runs where its caller runs (the supervisor: the main worktree),
	// never in the sandbox: that tree is the agent's, and a command run
	// there, outside any wall, could load what the agent left in it (a
	// `python3 -m`'s modules, a version file a shim reads). The sandbox
	// is $AGENCY_SANDBOX.
	cmd.Env = append(agentEnv(rec), "AGENCY_EVENT="+n.Event, "AGENCY_INVOCATION_ID="+n.InvocationID)

	cmd.Stdin = bytes.NewReader(append(body, '\n'))
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = time.Second
	err = subproc.Run(cmd)

	if ctx.Err() == context.DeadlineExceeded {
		return fmt.Errorf("timed out after %s", timeout)
	}

	if err != nil {
		msg := bytes.TrimSpace(out.Bytes())
		if len(msg) > 500 {
			msg = msg[len(msg)-500:]
		}
		if len(msg) > 0 {
			return fmt.Errorf("%v: %s", err, msg)
		}

		return err
	}

	return nil
}

// NeedsUser reports whether a status from stream.DeriveStatus wants a
// person (displayed as "needs input"): the runner's or the stream's
// needs_input, blocked, ready_for_review while still running, an error.
func NeedsUser(status string) bool {
	switch status {
	case stream.StatusNeedsInput, stream.StatusBlocked, stream.StatusReadyForReview, stream.StatusError:
		return true
	}
	return false
}

// waitingPoll is how often a headless run's status files are read for the
// needs-input notification.
const waitingPoll = 500 * time.Millisecond

// checkWaiting reads what readers derive the live status from
// (runner_status.json, logs/status.json) and, when the invocation enters
// needs input, records a needs_input event and notifies (once per entry).
// With live false only runner_status.json counts: a headless stream says
// "waiting" (a failed result, a final question, a refusal) only once its
// one turn has ended, while the runner is on its way out, and the finished
// or failed notification then says it; notifying needs_input too would
// announce a wait that nobody can answer, a moment before the end.
func (s *Supervisor) checkWaiting(sandbox string, live bool) {
	in := stream.StatusInput{Lifecycle: stream.LifecycleRunning}
	in.Runner, _ = stream.ReadRunnerStatus(sandbox)
	if ls := s.liveStatus(live); ls != nil {
		in.Stream = ls.State
	}

	status, summary := stream.DeriveStatus(in)
	waiting := NeedsUser(status)
	was := s.waiting
	s.waiting = waiting

	if !waiting || was {
		return
	}

	s.logf("the agent needs input: %s", summary)
	s.event("needs_input", map[string]any{"summary": summary})
	s.notify(NotifyNeedsInput, "needs input", summary)
}

// liveStatus is the live status file, when live.
func (s *Supervisor) liveStatus(live bool) *LiveStatus {
	if !live {
		return nil
	}
	return ReadLiveStatus(s.Store, s.Invocation)
}

// followWaiting calls checkWaiting for a headless run (its stream's
// state left out) until done is closed.
func (s *Supervisor) followWaiting(sandbox string, done <-chan struct{}) {
	t := time.NewTicker(waitingPoll)
	defer t.Stop()
	for {
		select {
		case <-done:
			return
		case <-t.C:
			s.checkWaiting(sandbox, false)
		}
	}
}
