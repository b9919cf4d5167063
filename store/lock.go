package store

import (
	"os"
	"syscall"
	"time"

	"github.com/git-agency/git-agency/errs"
)

// DefaultLockTimeout is how long a command waits for the repo lock.
const DefaultLockTimeout = 30 * time.Second

// Lock is the repo lock: flock on repos/<id>/.lock. The kernel releases it
// if the holder dies, so there is no stale-lock heuristic.
type Lock struct {
	f *os.File
}

// Lock takes the repo lock, waiting up to timeout.
func (s *Store) Lock(timeout time.Duration) (*Lock, error) {
	return lockFile(s.LockPath(), timeout)
}

// lockFile takes an flock on path, waiting up to timeout.
func lockFile(path string, timeout time.Duration) (*Lock, error) {
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
		time.Sleep(wait)
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
	syscall.Flock(int(l.f.Fd()), syscall.LOCK_UN)
	l.f.Close()
	l.f = nil
}
