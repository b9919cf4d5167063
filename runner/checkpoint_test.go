package runner

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/git-agency/git-agency/checkpoint"
	"github.com/git-agency/git-agency/errs"
	"github.com/git-agency/git-agency/gitcore"
	"github.com/git-agency/git-agency/internal/testrepo"
	"github.com/git-agency/git-agency/internal/testsandbox"
	"github.com/git-agency/git-agency/store"
)

const testInv = testsandbox.Inv

// sandbox makes a repository with one commit, a store, an invocation
// directory and a sandbox worktree on agency/sandbox-<inv> with .agency/.
func sandbox(t *testing.T) checkpoint.Options {
	t.Helper()
	sb := testsandbox.New(t)
	return checkpoint.Options{Repo: sb.Repo, Store: sb.Store, Invocation: sb.Inv, SandboxPath: sb.Tree, IncludeUntracked: true}
}

func treeHas(t *testing.T, o checkpoint.Options, commit, path string) bool {
	t.Helper()
	return testrepo.TreeHas(t, o.SandboxPath, commit, path)
}

func TestCheckpointTimingFromConfig(t *testing.T) {
	cfg := gitcore.NewConfig([]gitcore.ConfigEntry{{Key: "agency.checkpoint.debounce", Value: "100ms"}})
	tm, err := CheckpointTimingFromConfig(cfg)
	if err != nil || tm.Debounce != 100*time.Millisecond || tm.RateLimit != 10*time.Second || tm.FallbackInterval != 30*time.Second {
		t.Errorf("%+v %v", tm, err)
	}
	cfg = gitcore.NewConfig([]gitcore.ConfigEntry{{Key: "agency.checkpoint.ratelimit", Value: "soon"}})
	if _, err := CheckpointTimingFromConfig(cfg); !errs.Is(err, errs.EConfig) {
		t.Errorf("bad value: %v", err)
	}
}

type logBuf struct {
	mu    sync.Mutex
	lines []string
}

func (l *logBuf) logf(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, fmt.Sprintf(format, args...))
}

func (l *logBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}

func waitCheckpoints(t *testing.T, o checkpoint.Options, n int) []store.Checkpoint {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		f, err := o.Store.ReadCheckpoints(testInv)
		if err == nil && len(f.Checkpoints) >= n {
			return f.Checkpoints
		}
		time.Sleep(20 * time.Millisecond)
	}
	f, _ := o.Store.ReadCheckpoints(testInv)
	t.Fatalf("waited for %d checkpoints, have %+v", n, f.Checkpoints)
	return nil
}

// observe records the directories c watches and reports when its Run has
// started (watches in place, start-up dirty check made).
type observer struct {
	started chan struct{}
	mu      sync.Mutex
	watched map[string]bool
}

func observe(c *Checkpointer) *observer {
	ob := &observer{started: make(chan struct{}), watched: map[string]bool{}}
	add := c.addWatchFn
	c.addWatchFn = func(w *fsnotify.Watcher, path string) error {
		err := add(w, path)
		if err == nil {
			ob.mu.Lock()
			ob.watched[path] = true
			ob.mu.Unlock()
		}
		return err
	}
	c.startedFn = func() { close(ob.started) }
	return ob
}

func (ob *observer) waitStarted(t *testing.T) {
	t.Helper()
	select {
	case <-ob.started:
	case <-time.After(10 * time.Second):
		t.Fatal("the checkpointer did not start")
	}
}

func (ob *observer) isWatched(path string) bool {
	ob.mu.Lock()
	defer ob.mu.Unlock()
	return ob.watched[path]
}

func (ob *observer) waitWatched(t *testing.T, path string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !ob.isWatched(path) {
		if time.Now().After(deadline) {
			t.Fatalf("%s is not watched", path)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestCheckpointerWatches(t *testing.T) {
	o := sandbox(t)
	var log logBuf
	c := newCheckpointer(o, CheckpointTiming{Debounce: 50 * time.Millisecond, RateLimit: 100 * time.Millisecond}, log.logf)
	ob := observe(c)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { c.run(ctx); close(done) }()
	ob.waitStarted(t)

	testrepo.Write(t, o.SandboxPath, "one.txt", "1\n")
	cps := waitCheckpoints(t, o, 1)
	if cps[0].Reason != store.CheckpointAuto {
		t.Errorf("reason %q", cps[0].Reason)
	}
	// A new directory tree: watched as it appears.
	testrepo.Write(t, o.SandboxPath, "deep/er/two.txt", "2\n")
	waitCheckpoints(t, o, 2)
	ob.waitWatched(t, filepath.Join(o.SandboxPath, "deep", "er"))
	testrepo.Write(t, o.SandboxPath, "deep/er/two.txt", "2 changed\n")
	cps = waitCheckpoints(t, o, 3)
	if !treeHas(t, o, cps[2].SnapshotCommit, "deep/er/two.txt") {
		t.Error("third checkpoint lacks deep/er/two.txt")
	}
	// Ignored directories and .agency/ do not trigger: they are never
	// watched, and the events of .agency's creation are dropped.
	testrepo.Write(t, o.SandboxPath, "node_modules/x/y.js", "x\n")
	testrepo.Write(t, o.SandboxPath, ".agency/state/s", "x\n")
	for _, d := range []string{"node_modules", "node_modules/x", ".agency", ".agency/state"} {
		p := filepath.Join(o.SandboxPath, d)
		if ob.isWatched(p) {
			t.Errorf("%s is watched", d)
		}
		if _, track, trigger := c.classify(fsnotify.Event{Name: p, Op: fsnotify.Create}); strings.HasPrefix(d, ".agency") && (track || trigger) {
			t.Errorf("the creation of %s is not ignored", d)
		}
	}
	// A later write still triggers; no checkpoint came between, and none
	// holds the ignored files.
	testrepo.Write(t, o.SandboxPath, "after.txt", "a\n")
	cps = waitCheckpoints(t, o, 4)
	if len(cps) != 4 || !treeHas(t, o, cps[3].SnapshotCommit, "after.txt") ||
		treeHas(t, o, cps[3].SnapshotCommit, "node_modules/x/y.js") || treeHas(t, o, cps[3].SnapshotCommit, ".agency/state/s") {
		t.Errorf("checkpoints after the ignored writes: %+v", cps)
	}
	cancel()
	<-done
	// The final checkpoint after the agent exits.
	testrepo.Write(t, o.SandboxPath, "last.txt", "bye\n")
	c.final(context.Background())
	cps = waitCheckpoints(t, o, 5)
	if cps[4].Reason != store.CheckpointExit {
		t.Errorf("final reason %q", cps[4].Reason)
	}
	if !strings.Contains(log.String(), "checkpoint 5 (exit)") {
		t.Errorf("log:\n%s", log.String())
	}
}

func TestCheckpointerRateLimit(t *testing.T) {
	o := sandbox(t)
	c := newCheckpointer(o, CheckpointTiming{Debounce: 10 * time.Millisecond, RateLimit: 700 * time.Millisecond}, nil)
	ob := observe(c)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go c.run(ctx)
	ob.waitStarted(t)
	testrepo.Write(t, o.SandboxPath, "one.txt", "1\n")
	waitCheckpoints(t, o, 1)
	testrepo.Write(t, o.SandboxPath, "two.txt", "2\n")
	waitCheckpoints(t, o, 2)
	// created_at has second resolution; check the gap through the events.
	// A checkpoint's event follows its record in checkpoints.json.
	var evs []store.Event
	for deadline := time.Now().Add(10 * time.Second); len(evs) < 2; {
		if time.Now().After(deadline) {
			t.Fatalf("events: %+v, want two checkpoints", evs)
		}
		time.Sleep(10 * time.Millisecond)
		evs, _ = o.Store.ReadEvents(testInv)
	}
	e1, _ := time.Parse(time.RFC3339Nano, evs[0].Time)
	e2, _ := time.Parse(time.RFC3339Nano, evs[1].Time)
	if gap := e2.Sub(e1); gap < 650*time.Millisecond {
		t.Errorf("two checkpoints %s apart, rate limit 700ms", gap)
	}
}

func TestCheckpointerFallbackWithoutWatches(t *testing.T) {
	o := sandbox(t)
	var log logBuf
	c := newCheckpointer(o, CheckpointTiming{Debounce: 10 * time.Millisecond, RateLimit: 10 * time.Millisecond,
		FallbackInterval: 100 * time.Millisecond}, log.logf)
	c.addWatchFn = func(*fsnotify.Watcher, string) error { return syscall.ENOSPC }
	ob := observe(c)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go c.run(ctx)
	ob.waitStarted(t) // past the dirty check at start
	testrepo.Write(t, o.SandboxPath, "one.txt", "1\n")
	cps := waitCheckpoints(t, o, 1)
	if cps[0].Reason != store.CheckpointFallback {
		t.Errorf("reason %q", cps[0].Reason)
	}
	if !strings.Contains(log.String(), "out of inotify watches") {
		t.Errorf("log:\n%s", log.String())
	}
}

func TestCheckpointerDenylistReportedOnce(t *testing.T) {
	o := sandbox(t)
	c := newCheckpointer(o, CheckpointTiming{RateLimit: 10 * time.Millisecond}, nil)
	testrepo.Write(t, o.SandboxPath, ".env", "S=1\n")
	c.attempt(context.Background(), store.CheckpointFallback)
	c.attempt(context.Background(), store.CheckpointFallback)
	testrepo.Write(t, o.SandboxPath, "x.pem", "k\n")
	c.attempt(context.Background(), store.CheckpointFallback)
	evs, _ := o.Store.ReadEvents(testInv)
	if len(evs) != 2 {
		t.Errorf("events %+v", evs)
	}
}

// A lock file's change never starts a checkpoint, but the next one stages
// it (a Cargo.lock is content like any other); .git/ is neither.
func TestClassifyEvents(t *testing.T) {
	c := &Checkpointer{root: "/sb", ignored: map[string]bool{"build": true}}
	for name, want := range map[string][2]bool{
		"/sb/src/a.go":     {true, true},
		"/sb/Cargo.lock":   {true, false},
		"/sb/x/.lck":       {true, false},
		"/sb/.git/index":   {false, false},
		"/sb/build/out.o":  {false, false},
		"/sb/.agency/x":    {false, false},
		"/elsewhere/a.txt": {false, false},
	} {
		_, track, trigger := c.classify(fsnotify.Event{Name: name, Op: fsnotify.Write})
		if track != want[0] || trigger != want[1] {
			t.Errorf("%s: track %v trigger %v, want %v", name, track, trigger, want)
		}
	}
}
