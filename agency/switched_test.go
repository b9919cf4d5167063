package agency

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/git-agency/git-agency/runner/tmux"
)

// scriptedTmux answers list-clients from a script of replies, one a call;
// the last one repeats.
type scriptedTmux struct {
	mu      sync.Mutex
	replies []func() (tmux.Result, error)
	calls   int
}

func (s *scriptedTmux) Run(ctx context.Context, c tmux.Cmd) (tmux.Result, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	i := min(s.calls, len(s.replies)-1)
	s.calls++
	return s.replies[i]()
}

func on(session string) func() (tmux.Result, error) {
	return func() (tmux.Result, error) {
		return tmux.Result{Stdout: []byte("/dev/pts/1|" + session + "\n")}, nil
	}
}

func slow() (tmux.Result, error) { return tmux.Result{}, context.DeadlineExceeded }

// A tmux call that fails now and then (a loaded machine) does not end the
// wait: only the client leaving the session does, or tmux failing for good.
func TestWaitClientAwayRidesOutSlowTmux(t *testing.T) {
	st := &scriptedTmux{replies: []func() (tmux.Result, error){
		on("agency-x"), slow, slow, on("agency-x"), slow, on("me"),
	}}
	waitClientAway(context.Background(), &tmux.Client{Path: "/bin/true", Runner: st}, "/dev/pts/1", "agency-x", time.Millisecond)
	if st.calls != 6 {
		t.Fatalf("returned after %d tmux calls, want 6 (when the client showed another session)", st.calls)
	}

	gone := &scriptedTmux{replies: []func() (tmux.Result, error){slow}}
	waitClientAway(context.Background(), &tmux.Client{Path: "/bin/true", Runner: gone}, "/dev/pts/1", "agency-x", time.Millisecond)
	if gone.calls != switchedTries+1 {
		t.Fatalf("a tmux that keeps failing: %d calls, want %d", gone.calls, switchedTries+1)
	}
	noServer := &scriptedTmux{replies: []func() (tmux.Result, error){
		func() (tmux.Result, error) { return tmux.Result{}, tmux.ErrNoServer },
	}}
	waitClientAway(context.Background(), &tmux.Client{Path: "/bin/true", Runner: noServer}, "/dev/pts/1", "agency-x", time.Millisecond)
	if noServer.calls != 1 {
		t.Fatalf("no server: %d calls, want 1", noServer.calls)
	}
}
