package runner

import (
	"context"
	"strings"

	"github.com/git-agency/git-agency/checkpoint"
	"github.com/git-agency/git-agency/store"
	"github.com/git-agency/git-agency/wall"
)

// The supervisor runs a checkpointer beside every runner, headless or
// headed: its run while the agent works, its final after it exited and before the
// final record is written.
type checkpointTask struct {
	c    *Checkpointer
	done chan struct{}
	// settle, for a walled agent, brings in what its git left in its
	// shadow besides the sandbox branch (see Stop).
	settle func(context.Context)
}

func newCheckpointTask(s *Supervisor, rec *store.InvocationRecord) BackgroundTask {
	timing, err := CheckpointTimingFromConfig(s.Config)
	if err != nil {
		s.logf("checkpoint: %v; using the defaults", err)
		timing = defaultCheckpointTiming
	}

	o, err := checkpoint.FromConfig(s.Repo, s.Store, s.Config, s.Invocation, rec.SandboxPath, rec.IncludeUntracked, "")
	if err != nil {
		s.logf("checkpoint: %v; leaving out untracked files over %d bytes", err, checkpoint.DefaultMaxFileSize)
	}

	o.Warn = func(err error) { s.logf("%v", err) }
	o.Shadow, o.Branch = wall.ShadowDir(s.Store, s.Invocation), strings.TrimPrefix(rec.SandboxBranch, "refs/heads/")
	t := &checkpointTask{c: newCheckpointer(o, timing, s.logf), done: make(chan struct{})}
	if gitDir, err := wall.SandboxGitDir(rec.SandboxPath, s.Repo.CommonDir); err == nil && rec.Isolation == wall.IsolateBwrap {
		t.settle = func(ctx context.Context) {
			if err := wall.KeepShadowBranches(ctx, s.Repo, o.Shadow, gitDir, o.Branch, s.Invocation); err != nil {
				s.logf("bringing in the agent's branches: %v", err)
			}
		}
	}

	return t
}

func (t *checkpointTask) Start(ctx context.Context) {
	go func() {
		defer close(t.done)
		t.c.run(ctx)
	}()
}

// Stop waits for run (its context is already cancelled), then takes the
// final checkpoint. For a walled agent, the branches its git made in its
// shadow are kept first, and a tree it left on one of them is detached
// there, so that the final checkpoint sees a HEAD the repository has
// (wall.KeepShadowBranches).
func (t *checkpointTask) Stop(ctx context.Context) {
	<-t.done
	if t.settle != nil {
		t.settle(ctx)
	}
	t.c.final(ctx)
}
