package runner

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/git-agency/git-agency/checkpoint"
	"github.com/git-agency/git-agency/errs"
	"github.com/git-agency/git-agency/gitcore"
	"github.com/git-agency/git-agency/store"
)

// CheckpointTiming is the checkpointer's trigger policy.
type CheckpointTiming struct {
	// Debounce is the quiet time after the last file event before a
	// checkpoint is taken.
	Debounce time.Duration
	// RateLimit is the minimum time between two checkpoint attempts.
	RateLimit time.Duration
	// FallbackInterval is the period of the dirty check that catches what
	// file events missed; 0 disables it.
	FallbackInterval time.Duration
}

// defaultCheckpointTiming is the policy the agency.checkpoint.* settings
// default to: 3 s debounce, at most one checkpoint per 10 s, a dirty check
// every 30 s.
var defaultCheckpointTiming = CheckpointTiming{Debounce: 3 * time.Second, RateLimit: 10 * time.Second, FallbackInterval: 30 * time.Second}

// CheckpointTimingFromConfig reads agency.checkpoint.debounce, .rateLimit
// and .fallbackInterval (Go durations); a bad value is E_CONFIG.
func CheckpointTimingFromConfig(cfg *gitcore.Config) (CheckpointTiming, error) {
	t := defaultCheckpointTiming
	for _, f := range []struct {
		key string
		dst *time.Duration
	}{
		{"agency.checkpoint.debounce", &t.Debounce},
		{"agency.checkpoint.rateLimit", &t.RateLimit},
		{"agency.checkpoint.fallbackInterval", &t.FallbackInterval},
	} {
		d, ok := cfg.Duration(f.key, *f.dst)
		if !ok {
			v, _ := cfg.Get(f.key)
			return t, errs.Config(f.key, v, "a duration such as 3s, 10s or 1m")
		}
		*f.dst = d
	}

	return t, nil
}

// Checkpointer takes a sandbox's automatic checkpoints while its agent
// works: file events (fsnotify, every directory of the tree except .git/,
// .agency/ and directories git ignores) start a debounce; a checkpoint is
// taken after Debounce of quiet, at most one per RateLimit; a periodic
// dirty check catches what events missed. Failures are logged and recorded
// as events, never fatal.
type Checkpointer struct {
	o    checkpoint.Options
	t    CheckpointTiming
	logf func(format string, args ...any)

	mu         sync.Mutex // serialises attempts (run's and final's)
	last       time.Time  // last attempt
	lastDenied string     // denylisted files last reported, joined

	// kept is the last checkpoint's index; changed the paths file events
	// reported since, unless lost (a lost event, a failed attempt): an
	// automatic checkpoint then stages those paths alone
	// (gitcore.KeptIndex). The fallback check and the final checkpoint
	// look at everything.
	kept        gitcore.KeptIndex
	changed     map[string]bool
	changedLost bool

	// watching state (run's goroutine only)
	root       string
	ignored    map[string]bool // directories git ignores (relative)
	watchFull  bool            // inotify watches ran out
	addWatchFn func(w *fsnotify.Watcher, path string) error
	// startedFn, when set, is called once run watches the tree and has
	// made its start-up dirty check (tests wait on it instead of sleeping).
	startedFn func()
}

// newCheckpointer returns a checkpointer for one sandbox. logf receives
// warnings and progress (the supervisor's log); it may be nil.
func newCheckpointer(o checkpoint.Options, t CheckpointTiming, logf func(format string, args ...any)) *Checkpointer {
	if logf == nil {
		logf = func(string, ...any) {}
	}
	return &Checkpointer{o: o, t: t, logf: logf, root: o.SandboxPath,
		addWatchFn: func(w *fsnotify.Watcher, path string) error { return w.Add(path) }}
}

// run watches the sandbox and takes checkpoints until ctx is cancelled. A
// checkpoint in progress when ctx is cancelled is finished first.
func (c *Checkpointer) run(ctx context.Context) {
	var events <-chan fsnotify.Event
	var werrs <-chan error
	w, err := fsnotify.NewWatcher()
	if err != nil {
		c.logf("checkpoint: file watching unavailable (%v); relying on the dirty check every %s", err, c.t.FallbackInterval)
	} else {
		defer w.Close()
		c.watchTree(ctx, w)
		events, werrs = w.Events, w.Errors
	}

	timer := time.NewTimer(time.Hour)
	stopTimer(timer)
	pending := false
	var pendingSince time.Time
	var tick <-chan time.Time
	if c.t.FallbackInterval > 0 {
		ticker := time.NewTicker(c.t.FallbackInterval)
		defer ticker.Stop()
		tick = ticker.C
	}

	maxWait := c.t.FallbackInterval
	if maxWait <= 0 {
		maxWait = defaultCheckpointTiming.FallbackInterval
	}
	if maxWait < c.t.Debounce {
		maxWait = c.t.Debounce
	}

	// schedule arms the timer: after the debounce, but no later than
	// maxWait after the first pending event (an agent that never pauses
	// still gets checkpoints), and never before the rate limit allows.
	schedule := func(now time.Time) {
		if !pending {
			pending, pendingSince = true, now
		}

		due := now.Add(c.t.Debounce)
		if cap := pendingSince.Add(maxWait); due.After(cap) {
			due = cap
		}
		if rl := c.lastAttempt().Add(c.t.RateLimit); rl.After(due) {
			due = rl
		}

		stopTimer(timer)
		timer.Reset(time.Until(due))
	}

	// Changes made before the watches were in place raise no event: one
	// dirty check now catches them.
	if dirty, err := c.o.Repo.Tree(c.root).IsDirtyQuick(ctx, c.o.IncludeUntracked); err == nil && dirty {
		schedule(time.Now())
	}
	if c.startedFn != nil {
		c.startedFn()
	}

	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-events:
			if !ok {
				events = nil
				continue
			}

			rel, track, trigger := c.classify(ev)
			if track {
				c.noteChanged(rel)
			}
			if !trigger {
				continue
			}
			if ev.Has(fsnotify.Create) {
				if fi, err := os.Lstat(ev.Name); err == nil && fi.IsDir() {
					c.watchNewDir(ctx, w, ev.Name)
				}
			}

			schedule(time.Now())
		case err, ok := <-werrs:
			if !ok {
				werrs = nil
				continue
			}

			if errors.Is(err, fsnotify.ErrEventOverflow) {
				c.logf("checkpoint: file event queue overflowed; checkpointing anyway")
				c.changedLost = true
				schedule(time.Now())
				continue
			}

			c.logf("checkpoint: file watcher: %v", err)
		case <-timer.C:
			if since := time.Since(c.lastAttempt()); since < c.t.RateLimit {
				stopTimer(timer)
				timer.Reset(c.t.RateLimit - since)
				continue
			}
			pending = false
			c.attempt(ctx, store.CheckpointAuto)
		case <-tick:
			// The dirty check runs only when it could lead to a checkpoint:
			// nothing already scheduled and the rate limit allows one.
			if pending || time.Since(c.lastAttempt()) < c.t.RateLimit {
				continue
			}

			dirty, err := c.o.Repo.Tree(c.root).IsDirtyQuick(ctx, c.o.IncludeUntracked)
			if err != nil {
				if ctx.Err() == nil {
					c.logf("checkpoint: dirty check: %v", err)
				}
				continue
			}

			if dirty {
				c.attempt(ctx, store.CheckpointFallback)
			}
		}
	}
}

// final takes the checkpoint after the agent has exited, regardless of the
// rate limit (skipped when nothing changed since the last one), looking
// at every file, and removes the kept index.
func (c *Checkpointer) final(ctx context.Context) {
	c.attempt(ctx, store.CheckpointExit)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.kept.Remove()
}

// noteChanged remembers a path (relative) file events reported.
func (c *Checkpointer) noteChanged(rel string) {
	if c.changed == nil {
		c.changed = map[string]bool{}
	}
	c.changed[rel] = true
}

func (c *Checkpointer) lastAttempt() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.last
}

// attempt takes one checkpoint. It runs to completion even when ctx is
// cancelled meanwhile (a half-made checkpoint helps nobody), bounded by a
// timeout of its own.
func (c *Checkpointer) attempt(ctx context.Context, reason string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Minute)
	defer cancel()
	o := c.o
	o.Reason = reason
	o.Kept = &c.kept
	if reason == store.CheckpointAuto && !c.changedLost && !c.watchFull {
		o.Changed = make([]string, 0, len(c.changed))
		for p := range c.changed {
			o.Changed = append(o.Changed, p)
		}
		sort.Strings(o.Changed)
	}

	c.changed, c.changedLost = nil, false
	cp, err := checkpoint.TakeReporting(cctx, o, c.reportDenied)
	if err != nil {
		// The kept index may lack what was staged: look at everything next.
		c.changedLost = true
	}

	c.last = time.Now()
	switch {
	case errs.Is(err, errs.EDenylisted):

		// reportDenied logged it.
	case err != nil:
		c.logf("checkpoint (%s) failed: %v", reason, err)
	case cp != nil:
		c.lastDenied = ""
		c.logf("checkpoint %d (%s): %s", cp.ID, reason, cp.Diffstat)
	default:
		c.lastDenied = ""
	}
}

// reportDenied logs and reports a denylist hit once per set of files.
func (c *Checkpointer) reportDenied(files []string) bool {
	key := strings.Join(files, "\x00")
	if key == c.lastDenied {
		return false
	}
	c.lastDenied = key
	c.logf("warning: checkpoint skipped: untracked files match the denylist: %s", strings.Join(files, ", "))
	return true
}

// classify sorts a file event: track says the path (rel, relative to the
// root) may change what a checkpoint holds; trigger that the checkpointer
// reacts to it. Lock files are tracked but never trigger one (they come
// and go with every tool run); .git/, .agency/ and directories git ignores
// are neither.
func (c *Checkpointer) classify(ev fsnotify.Event) (rel string, track, trigger bool) {
	rel, err := filepath.Rel(c.root, ev.Name)
	if err != nil || rel == "." || strings.HasPrefix(rel, "..") {
		return "", false, false
	}

	rel = filepath.ToSlash(rel)
	if rel == store.AgencyDir || strings.HasPrefix(rel, store.AgencyDir+"/") {
		return "", false, false
	}

	parts := strings.Split(rel, "/")
	for _, p := range parts {
		if p == ".git" {
			return "", false, false
		}
	}

	for i := 1; i < len(parts); i++ {
		if c.ignored[strings.Join(parts[:i], "/")] {
			return "", false, false
		}
	}

	base := parts[len(parts)-1]
	lock := strings.HasSuffix(base, ".lock") || strings.HasSuffix(base, ".lck")
	return rel, true, !lock
}

// skipDir reports whether a directory (relative path) is never watched.
func (c *Checkpointer) skipDir(rel string) bool {
	if rel == store.AgencyDir || filepath.Base(rel) == ".git" {
		return true
	}
	return c.ignored[rel]
}

// watchTree watches every directory of the sandbox except the skipped ones.
// Directories git ignores come from one `git ls-files -o -i --directory`.
func (c *Checkpointer) watchTree(ctx context.Context, w *fsnotify.Watcher) {
	c.ignored = map[string]bool{}
	if dirs, err := c.o.Repo.Tree(c.root).IgnoredDirs(ctx); err == nil {
		for _, d := range dirs {
			c.ignored[d] = true
		}
	} else {
		c.logf("checkpoint: listing ignored directories: %v", err)
	}
	c.walkAndWatch(w, c.root)
}

// watchNewDir watches a directory that appeared (and whatever it already
// holds), asking git once which of them it ignores.
func (c *Checkpointer) watchNewDir(ctx context.Context, w *fsnotify.Watcher, dir string) {
	if w == nil || c.watchFull {
		return
	}

	var dirs []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return nil
		}
		rel, _ := filepath.Rel(c.root, p)
		rel = filepath.ToSlash(rel)
		if c.skipDir(rel) {
			return filepath.SkipDir
		}
		dirs = append(dirs, rel)
		return nil
	})
	ign, err := c.o.Repo.Tree(c.root).CheckIgnored(ctx, dirs)
	if err != nil {
		c.logf("checkpoint: check-ignore: %v", err)
		ign = map[string]bool{}
	}

	for d := range ign {
		c.ignored[d] = true
	}

	c.walkAndWatch(w, dir)
}

func (c *Checkpointer) walkAndWatch(w *fsnotify.Watcher, dir string) {
	var list []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return nil
		}
		rel, _ := filepath.Rel(c.root, p)
		rel = filepath.ToSlash(rel)
		if rel != "." && c.skipDir(rel) {
			return filepath.SkipDir
		}
		list = append(list, p)
		return nil
	})
	sort.Strings(list)

	for _, p := range list {
		if c.watchFull {
			return
		}
		if err := c.addWatchFn(w, p); err != nil {
			if errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EMFILE) {
				c.watchFull = true
				c.logf("checkpoint: out of inotify watches (%v; raise fs.inotify.max_user_watches); "+
					"new changes are caught by the dirty check every %s", err, c.t.FallbackInterval)
				return
			}
			// The directory vanished meanwhile: nothing to watch.
		}
	}
}

func stopTimer(t *time.Timer) {
	if !t.Stop() {
		select {
		case <-t.C:
		default:
		}
	}
}
