package errs

import "fmt"

// Checkpoint rollbacks (checkpoint apply, git sandbox rollback).

// RollbackLaterCommits: a checkpoint apply restored files only, and HEAD
// stays n commits past the checkpoint's HEAD (checkpointHead).
func RollbackLaterCommits(n int, head, checkpointHead, sandbox string) string {
	commits := "1 commit"
	if n != 1 {
		commits = fmt.Sprintf("%d commits", n)
	}
	return "note: HEAD stays at " + head + ", " + commits + " past the checkpoint's " + checkpointHead +
		": the files are the checkpoint's, so those commits show undone as uncommitted changes, and land --apply would land them and their undoing as one more commit\n" +
		"to drop them instead, move HEAD back too: git -C " + sandbox + " reset --soft " + checkpointHead + " (then land --apply lands exactly the checkpoint; undo of this rollback refuses once HEAD moved)"
}
