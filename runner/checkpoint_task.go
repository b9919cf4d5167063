package runner

import (
	"context"

	"github.com/git-agency/git-agency/checkpoint"
	"github.com/git-agency/git-agency/store"
)

// The supervisor runs a checkpointer beside every runner, headless or
// headed: Run while the agent works, Final after it exited and before the
// final record is written.
type checkpointTask struct {
	c    *Checkpointer
	done chan struct{}
}

func newCheckpointTask(s *Supervisor, rec *store.InvocationRecord) BackgroundTask {
	timing, err := CheckpointTimingFromConfig(s.Config)
	if err != nil {
		s.logf("checkpoint: %v; using the defaults", err)
		timing = DefaultCheckpointTiming
	}
	o, err := checkpoint.FromConfig(s.Repo, s.Store, s.Config, s.Invocation, rec.SandboxPath, rec.IncludeUntracked, "")
	if err != nil {
		s.logf("checkpoint: %v; leaving out untracked files over %d bytes", err, checkpoint.DefaultMaxFileSize)
	}
	o.Warn = func(err error) { s.logf("%v", err) }
	return &checkpointTask{c: NewCheckpointer(o, timing, s.logf), done: make(chan struct{})}
}

func (t *checkpointTask) Start(ctx context.Context) {
	go func() {
		defer close(t.done)
		t.c.Run(ctx)
	}()
}

// Stop waits for Run (its context is already cancelled), then takes the
// final checkpoint.
func (t *checkpointTask) Stop(ctx context.Context) {
	<-t.done
	t.c.Final(ctx)
}
