package agency

import (
	"context"
	"errors"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/git-agency/git-agency/gitcore"
	"github.com/git-agency/git-agency/store"
)

// A queued invocation that cannot start and whose failure cannot be
// recorded says so, and stays in a state the queue or reconcile repairs.
func TestLaunchQueuedReportsFailedRecordWrite(t *testing.T) {
	f := newLogFixture(t, store.StatusQueued)
	f.a.Failpoint = func(step string) error {
		if step == FPQueueRecordFailed {
			return errors.New("disk full")
		}
		return nil
	}
	lock, err := f.a.Lock()
	if err != nil {
		t.Fatal(err)
	}
	err = f.a.launchQueuedLocked(context.Background(), f.rec)
	lock.Unlock()
	if err == nil || !strings.Contains(err.Error(), "recording the failure failed too: ") {
		t.Fatalf("err = %v, want the failed record write", err)
	}
	cur, err := f.a.Store.ReadInvocation(f.rec.InvocationID)
	if err != nil {
		t.Fatal(err)
	}
	if !cur.Queued() {
		t.Errorf("status = %q, want queued (tried again)", cur.Status)
	}
}

// brokenPipe is a reader that went away.
type brokenPipe struct{}

func (brokenPipe) Write([]byte) (int, error) { return 0, syscall.EPIPE }

// Follow stops when its output is closed (`| head -1`), the agent still
// running.
func TestFollowStopsOnClosedOutput(t *testing.T) {
	for _, kind := range []LogKind{LogRaw, LogReadable} {
		f := newLogFixture(t, store.StatusRunning)
		f.appendLog("raw.jsonl", "hello\n")
		f.appendLog(StreamLog, toolCall)
		done := make(chan error, 1)
		go func() {
			_, err := f.a.Follow(context.Background(), f.rec.InvocationID,
				FollowOptions{Stdout: brokenPipe{}, Stderr: &syncBuffer{}, Kind: kind, Poll: 10 * time.Millisecond})
			done <- err
		}()
		select {
		case err := <-done:
			if !errors.Is(err, ErrOutputClosed) {
				t.Fatalf("kind %v: err = %v, want ErrOutputClosed", kind, err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("kind %v: Follow kept following a closed output", kind)
		}
	}
}

// deadlineRunner records git calls made without a deadline.
type deadlineRunner struct{ unbounded []string }

func (d *deadlineRunner) Run(ctx context.Context, c gitcore.Cmd) (gitcore.Result, error) {
	if _, ok := ctx.Deadline(); !ok {
		d.unbounded = append(d.unbounded, strings.Join(c.Args, " "))
	}
	return gitcore.ExecRunner{}.Run(ctx, c)
}

// Under the repo lock, the git call that finds where the supervisor runs
// has a deadline: a hung git must not hold the lock for every other command.
func TestSupervisorDirGitCallIsBounded(t *testing.T) {
	repo := newRepo(t)
	ctx := context.Background()
	d := &deadlineRunner{}
	a, err := Open(ctx, repo, d)
	if err != nil {
		t.Fatal(err)
	}
	d.unbounded = nil
	if got, err := a.supervisorDir(ctx); err != nil || got != a.Repo.Toplevel {
		t.Errorf("supervisorDir = %q, %v; want %q", got, err, a.Repo.Toplevel)
	}
	if len(d.unbounded) != 0 {
		t.Errorf("git calls without a deadline: %q", d.unbounded)
	}
}
