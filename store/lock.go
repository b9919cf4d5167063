package store

import (
	"context"
	"os"
	"syscall"
	"time"

	"github.com/git-agency/git-agency/errs"
)

// DefaultLockTimeout is how long a command waits for the repo lock.
const DefaultLockTimeout = 30 * time.Second

// Lock is the repo lock: flock on repos/<id>/.lock. The kernel releases it
// if the holder dies, so there is no stale-lock heuristic.
//
// The rules (docs/architecture.md, "Locks"):
//   - mutations of records, `git worktree add/remove` and landing hold it;
//   - readers never take it, except reconcile, which waits briefly and
//     repairs the record next time when the lock is busy;
//   - it is never held while an agent runs, and every subprocess run under
//     it has a context deadline;
//   - a function named …Locked expects its caller to hold it, and the store
//     functions among them check that (HoldsLock) and refuse with E_INTERNAL.
type Lock struct {
	f *os.File
	// owner is the Store whose repo lock this is (nil for other locks,
	// such as a sandbox's checkpoint lock).
	owner *Store
}

// Lock takes the repo lock, waiting up to timeout. flock excludes a second
// holder even inside one process, so a Store holds it at most once.
func (s *Store) Lock(timeout time.Duration) (*Lock, error) {
	return s.LockContext(context.Background(), timeout)
}

// LockContext is Lock that gives up when ctx ends (Ctrl-C, SIGTERM) while
// it waits: E_INTERRUPTED, nothing held.
func (s *Store) LockContext(ctx context.Context, timeout time.Duration) (*Lock, error) {
	l, err := lockFile(ctx, s.lockPath(), timeout)
	if err != nil {
		return nil, err
	}
	l.owner = s
	s.held.Add(1)
	return l, nil
}

// HoldsLock reports whether this Store holds the repo lock now.
func (s *Store) HoldsLock() bool { return s.held.Load() > 0 }

// RequireLock is the check of the functions that expect the repo lock
// (those named …Locked, here and in agency): called without it they would
// race another command's read-modify-write. It returns E_INTERNAL then.
func (s *Store) RequireLock(op string) error {
	if s.HoldsLock() {
		return nil
	}
	return errs.Internal("%s needs the repo lock, which this command does not hold", op)
}

// lockFile takes an flock on path, waiting up to timeout or until ctx ends.
func lockFile(ctx context.Context, path string, timeout time.Duration) (*Lock, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, errs.IO("open lock", path, err)
	}

	deadline := time.Now().Add(timeout)
	wait := 5 * time.Millisecond
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return &Lock{f: f}, nil
		}

		if err != syscall.EWOULDBLOCK && err != syscall.EINTR {
			f.Close()
			return nil, errs.IO("lock", path, err)
		}

		if time.Now().After(deadline) {
			f.Close()
			return nil, errs.Locked(path, timeout.String())
		}

		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			f.Close()
			return nil, errs.Interrupted("waiting for the repository lock")
		case <-t.C:
		}

		if wait < 100*time.Millisecond {
			wait *= 2
		}
	}
}

// Unlock releases the lock. Safe on nil.
func (l *Lock) Unlock() {
	if l == nil || l.f == nil {
		return
	}
	// Closing the file releases the lock too, whatever LOCK_UN answered.
	_ = syscall.Flock(int(l.f.Fd()), syscall.LOCK_UN)
	l.f.Close()
	l.f = nil
	if l.owner != nil {
		l.owner.held.Add(-1)
		l.owner = nil
	}
}
