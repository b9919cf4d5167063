package agency

import (
	"fmt"
	"strings"
	"time"

	"github.com/git-agency/git-agency/agency/internal/core"
	"github.com/git-agency/git-agency/store"
)

// Report is what a successful discard says, line by line; the first line
// is its summary.
func (r *DiscardResult) Report() []string {
	rec := r.Invocation
	var first string
	switch {
	case r.AlreadyDiscarded:
		first = rec.InvocationID + " was already discarded"
	case r.Stopped:
		reason := store.Deref(rec.ExitReason)
		if reason == "" {
			reason = "-"
		}
		first = fmt.Sprintf("discarded %s (stopped first: %s, %s)", rec.InvocationID, rec.Status, reason)
	default:
		first = "discarded " + rec.InvocationID
	}

	if r.AlreadyDiscarded {
		return []string{first}
	}

	saved := "nothing uncommitted to save"
	if r.Restore != nil && r.Restore.Checkpoint > 0 {
		saved = fmt.Sprintf("uncommitted work saved as checkpoint %d", r.Restore.Checkpoint)
	}

	lines := []string{first, fmt.Sprintf("sandbox tree removed (%s); branch %s and snapshot refs kept until gc", saved, rec.SandboxBranch)}
	if r.Restore != nil && len(r.Restore.NotKept) > 0 {
		lines = append(lines, fmt.Sprintf("not saved (denylisted): %s", strings.Join(r.Restore.NotKept, " ")))
	}

	if r.Kept != "" {
		lines = append(lines, KeptHeadLine(r.Kept, "'git agency gc --force' deletes it"))
	}

	for _, ref := range r.KeptSubmodules {
		lines = append(lines, KeptSubmoduleLine(ref, rec.InvocationID, "sandbox", "'git agency gc --force' deletes it"))
	}

	for _, p := range r.DirtySubmodules {
		lines = append(lines, DirtySubmoduleLine(p)+": they went with the sandbox, undo does not bring them back")
	}

	return append(lines, "undo with: git agency undo")
}

// KeptSubmoduleLine says that a commit of a removed tree's submodule that
// only the tree (of invocation or worktree id) had is kept as ref; then how
// it goes.
func KeptSubmoduleLine(ref, id, tree, goes string) string {
	path := strings.TrimPrefix(ref, store.KeptRefPrefix(id)+"submodule/")
	return "submodule " + path + " held a commit only the " + tree + " had: kept as " + ref + " (fetch it into the submodule; " + goes + ")"
}

// DirtySubmoduleLine says that submodule path has changed or untracked
// files inside it, which no checkpoint holds (only commits made in the
// submodule are).
func DirtySubmoduleLine(path string) string {
	return "submodule " + path + " has uncommitted changes inside it that no checkpoint holds (commit them in the submodule)"
}

// KeptHeadLine says that a removed tree's HEAD, which no branch had, is
// kept as ref; then how it goes.
func KeptHeadLine(ref, goes string) string {
	return "its HEAD held commits no branch has: kept as " + ref + " (save them on a branch; " + goes + ")"
}

// Plural is "1 commit", "2 commits".
func Plural(n int, word string) string { return core.Plural(n, word) }

// ShortSHA is the first 12 characters of an object or invocation id.
func ShortSHA(id string) string { return core.ShortSHA(id) }

// Ago renders a duration as "3m ago".
func Ago(d time.Duration) string { return core.Ago(d) }
