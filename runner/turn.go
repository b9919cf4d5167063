package runner

import (
	"os"
	"path/filepath"
	"time"

	"github.com/git-agency/git-agency/runner/stream"
	"github.com/git-agency/git-agency/store"
)

// An invocation is a conversation of one or more turns (agent start, then
// each agent send). Its usage is the conversation's: the stream parser
// continues from the earlier runs' account (Parser.Continue).

// TurnRunnerStatus is the sandbox's runner_status.json when the current
// turn wrote it: one left from an earlier turn (older than the record's
// turn_started_at) says nothing about this one. nil when there is none or
// it cannot be read.
func TurnRunnerStatus(rec *store.InvocationRecord) *stream.RunnerStatus {
	rs, err := stream.ReadRunnerStatus(rec.SandboxPath)
	if err != nil || rs == nil {
		return nil
	}

	if rec.TurnStartedAt != "" {
		began, err := time.Parse(time.RFC3339, rec.TurnStartedAt)
		fi, serr := os.Stat(filepath.Join(rec.SandboxPath, stream.RunnerStatusPath))
		// RFC3339 has whole seconds: a file from the turn's first second counts.
		if err == nil && serr == nil && fi.ModTime().Before(began) {
			return nil
		}
	}

	return rs
}
