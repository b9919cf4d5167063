package agency

import (
	"os"

	"github.com/git-agency/git-agency/runner"
	"github.com/git-agency/git-agency/store"
)

// markCreator writes this process as the creator of a new record
// directory (store.CreatorFile), before the create makes a branch or a
// tree, so that doctor and gc can tell a killed create from one in
// progress without waiting for the repo lock.
func markCreator(dir string) error {
	pid := os.Getpid()
	return store.WriteCreator(dir, store.Creator{PID: pid, StartTime: runner.StartTimeOf(pid)})
}

// markAdoptCreator is markCreator for `worktree adopt`, with what it is
// about to write into the user's tree (m).
func markAdoptCreator(dir string, m store.AdoptMarks) error {
	pid := os.Getpid()
	return store.WriteCreator(dir, store.Creator{PID: pid, StartTime: runner.StartTimeOf(pid), Adopt: &m})
}
