// Package agency holds git-agency's use cases: worktrees, invocations,
// checkpoints, landing, reconcile and derived status. It returns typed
// results and typed errors and never prints.
package agency

import (
	"context"
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/git-agency/git-agency/agency/internal/core"
	"github.com/git-agency/git-agency/agency/land"
	"github.com/git-agency/git-agency/agency/remote"
	"github.com/git-agency/git-agency/errs"
	"github.com/git-agency/git-agency/gitcore"
	"github.com/git-agency/git-agency/store"
)

// App is one command's view of one repository: discovered once, with its
// configuration read once.
type App struct {
	Repo   *gitcore.Repo
	Store  *store.Store
	Config *gitcore.Config
	// Getenv reads the environment (tests replace it).
	Getenv func(string) string
	// Now is the clock.
	Now func() time.Time
	// LockTimeout bounds the wait for the repo lock.
	LockTimeout time.Duration
	// Failpoint, when it returns an error for a named step, makes that step
	// fail. Tests use it (or $AGENCY_FAILPOINT=<step>) to check cleanup;
	// $AGENCY_FAILPOINT=kill:<step> kills the process there (SIGKILL).
	Failpoint func(step string) error
	// Relinked is set when Open found the repository moved and relinked
	// its records.
	Relinked *Relink
	// Warn, when set, is told what went wrong without failing the command
	// (an event that could not be recorded, say); cli prints it as a
	// warning. It is also written to the invocation's supervisor.log.
	Warn func(error)
	// DetachRemovals: retired trees (a landed sandbox's) are deleted by a
	// remover process that outlives the command (runner.SpawnRemover), so
	// the command does not wait for it; otherwise the command deletes them
	// itself. The front ends set it.
	DetachRemovals bool
	// mainTree remembers mainWorktree's answer once found: a start asks
	// twice (includes, the supervisor's directory).
	mainTree struct {
		sync.Mutex
		dir string
	}
	// notes are the landing notifications waiting for the repo lock to be
	// released (land.Notes; watch lands from its own goroutines).
	notes land.Notes
	// hostLooks: what the hosts answered this command's views.
	hostLooks remote.Looks
}

// Open discovers the repository containing dir, reads agency.* config and
// opens the data directory.
func Open(ctx context.Context, dir string, runner gitcore.CommandRunner) (*App, error) {
	if runner == nil {
		runner = gitcore.ExecRunner{}
	}

	repo, err := gitcore.Discover(ctx, runner, dir)
	if err != nil {
		return nil, err
	}

	entries, err := repo.Config(ctx)
	if err != nil {
		return nil, gitErr(err)
	}

	cfg := gitcore.NewConfig(entries)
	configured, _ := cfg.Get("agency.dataDir")
	dataDir, err := store.DataDir(os.Getenv, configured)
	if err != nil {
		return nil, err
	}

	st, err := store.Open(dataDir, repo.CommonDir)
	if err != nil {
		return nil, err
	}

	a, err := newApp(repo, cfg, st)
	if err != nil {
		return nil, err
	}

	if st.MovedFrom != "" {
		a.Relinked = a.relink(ctx)
	}

	return a, nil
}

// newApp is the App of repo with its configuration and store.
func newApp(repo *gitcore.Repo, cfg *gitcore.Config, st *store.Store) (*App, error) {
	timeout, ok := cfg.Duration("agency.lockTimeout", store.DefaultLockTimeout)
	if !ok {
		v, _ := cfg.Get("agency.lockTimeout")
		return nil, errs.Config("agency.lockTimeout", v, "a duration such as 30s")
	}

	a := &App{Repo: repo, Store: st, Config: cfg, Getenv: os.Getenv, Now: time.Now, LockTimeout: timeout}
	if fp := os.Getenv("AGENCY_FAILPOINT"); fp != "" {
		a.Failpoint = func(step string) error {
			if "kill:"+step == fp {
				// kill -9 at this step: what a crash leaves behind.
				syscall.Kill(os.Getpid(), syscall.SIGKILL)
			}

			if step == fp {
				return errs.New(errs.EInternal, "", "injected failure at %s", step)
			}

			return nil
		}
	}

	return a, nil
}

// core is the part of a that agency's own packages (land) work with, as
// it is now (tests set Now, Warn and Failpoint after Open).
func (a *App) core() core.Core {
	return core.Core{Repo: a.Repo, Store: a.Store, Config: a.Config, Getenv: a.Getenv, Now: a.Now,
		LockTimeout: a.LockTimeout, Failpoint: a.Failpoint, Warn: a.Warn}
}

// fail reports an injected failure at step, if any.
func (a *App) fail(step string) error {
	c := a.core()
	return c.Fail(step)
}

// Lock takes the repo lock. Use lockWork inside agency: it also bounds the
// work done under the lock.
func (a *App) Lock() (*store.Lock, error) { return a.Store.Lock(a.LockTimeout) }

// LockedWorkTimeout bounds the work done under the repo lock
// (core.LockedWorkTimeout).
const LockedWorkTimeout = core.LockedWorkTimeout

// lockWork takes the repo lock (waiting up to a.LockTimeout) and returns the
// context to do the locked work with (ctx, bounded by LockedWorkTimeout)
// and the function that ends it (cancel and unlock).
func (a *App) lockWork(ctx context.Context) (context.Context, func(), error) {
	return a.lockWorkWait(ctx, a.LockTimeout)
}

// lockWorkWait is lockWork waiting up to wait for the lock.
func (a *App) lockWorkWait(ctx context.Context, wait time.Duration) (context.Context, func(), error) {
	c := a.core()
	return c.LockWorkWait(ctx, wait)
}

// warn reports what went wrong without failing the command, so that it is
// never silent (core.Core.Warning).
func (a *App) warn(inv string, err error) {
	c := a.core()
	c.Warning(inv, err)
}

// event appends an event to the invocation's events.jsonl (core.Core.Event).
func (a *App) event(inv, name string, data map[string]any) {
	c := a.core()
	c.Event(inv, name, data)
}

// now is the current time in RFC3339, UTC.
func (a *App) now() string { return a.Now().UTC().Format(time.RFC3339) }

// gitErr turns a *gitcore.GitError into an E_GIT error; other errors pass.
func gitErr(err error) error { return core.GitErr(err) }
