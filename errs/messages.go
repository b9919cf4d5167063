package errs

import (
	"errors"
	"fmt"
	"strings"
)

// All user-facing wording. Lower case, say what happened, then the fix.

func NotARepo(dir string) *Error {
	return New(ENotARepo, "run git agency from inside a git repository (its main worktree or any linked worktree)",
		"not a git repository: %s", dir)
}

// RepoDirMissing: --repo names no directory.
func RepoDirMissing(dir string) *Error {
	return New(ENotARepo, "--repo takes a directory of the repository (a worktree of it), as git -C does",
		"--repo %s: no such directory", dir)
}

func BareRepo(dir string) *Error {
	return New(EBareRepo, "integration worktrees need a repository with a working tree; run from a non-bare clone",
		"bare repositories are not supported: %s", dir)
}

func InvalidName(name string) *Error {
	return New(EInvalidName, "names are 2 to 40 characters of a-z, 0-9 and '-', not starting or ending with '-'",
		"invalid name %q", name)
}

func NameTaken(name, id string) *Error {
	return New(ENameTaken, "choose another name, or remove the existing worktree with 'git agency worktree rm "+name+"'",
		"a worktree named %q already exists (%s)", name, id)
}

func NotFound(kind, query string) *Error {
	hint := "list them with 'git agency worktree ls --all'"
	if kind == "invocation" {
		hint = "list them with 'git agency agent ls'"
	}
	return New(ENotFound, hint, "no %s matches %q", kind, query)
}

func Ambiguous(kind, query string, candidates []string) *Error {
	return New(EAmbiguous, "use more characters of the id, or the full id",
		"%q matches %d %ss", query, len(candidates), kind).With(candidates...)
}

func StoreCorrupt(path string, cause error) *Error {
	e := New(EStoreCorrupt, "meta.json is corrupt or unreadable; inspect or remove the directory manually",
		"record is corrupt: %s", path)
	e.Err = cause
	return e
}

func Locked(path string, timeout string) *Error {
	return New(ELocked, "another git agency command is working on this repository; wait for it and retry",
		"repository lock is held by another process (waited %s): %s", timeout, path)
}

func DetachedHead() *Error {
	return New(EDetachedHead, "check out a branch, or name the parent with --parent <branch>",
		"HEAD is detached; cannot tell which branch to start from")
}

func BranchNotFound(branch string) *Error {
	return New(EBranchNotFound, "check the name with 'git branch --list'",
		"branch %q does not exist", branch)
}

func DirtyParent(dir string) *Error {
	return New(EDirtyWorktree, "commit or stash your changes first",
		"the current working tree has uncommitted changes: %s", dir)
}

func DirtyWorktree(name string) *Error {
	return New(EDirtyWorktree, "commit or stash your changes, or rerun with --force",
		"worktree %q has uncommitted changes", name)
}

func NoEditor() *Error {
	return New(ENoEditor, "pass --editor, or set one with 'git config agency.editor code' (or $VISUAL / $EDITOR)",
		"no editor configured")
}

func EditorFailed(editor string, err error) *Error {
	return Wrap(EEditorFailed, err, "check the editor command", "editor %q failed", editor)
}

func Archived(name, id string) *Error {
	return New(EArchived, "the worktree was removed; create a new one with 'git agency worktree create --name "+name+"'",
		"worktree %q (%s) is archived", name, id)
}

// ArchivedLand: an invocation whose integration worktree was removed cannot
// land (there is no tree to land into); its work is still in its sandbox
// and on its branch, and the hint says how to get it out.
func ArchivedLand(name, id, inv, branch string) *Error {
	return New(EArchived, "its work is kept: 'git agency agent diff "+inv+"' shows it; to land it elsewhere, cherry-pick its branch "+branch+
		" in another worktree (and 'git apply' the diff's uncommitted part), then 'git agency agent discard "+inv+"'",
		"invocation %s cannot land: its worktree %q (%s) was removed", inv, name, id)
}

// WorktreeTreeGone: a worktree record says present but its directory is
// gone (removed behind git-agency's back, or by a racing worktree rm).
func WorktreeTreeGone(name, tree string) *Error {
	return New(ENotFound, "'git agency worktree rm "+name+"' archives the record; then create it again",
		"worktree %q: its directory %s is gone", name, tree)
}

func Git(args []string, exit int, stderr string) *Error {
	msg := fmt.Sprintf("git %s failed (exit %d)", strings.Join(args, " "), exit)
	if s := strings.TrimSpace(stderr); s != "" {
		msg += ": " + s
	}
	return New(EGit, "", "%s", msg)
}

func IO(op, path string, err error) *Error {
	return Wrap(EIO, err, "", "%s %s", op, path)
}

func Config(key, value, want string) *Error {
	return New(EConfig, "fix it with 'git config "+key+" <value>'",
		"invalid value %q for %s: want %s", value, key, want)
}

func UnsafePath(path, root string) *Error {
	return New(EUnsafePath, "this is a bug in git agency; please report it",
		"refusing to remove %s: it is not inside %s", path, root)
}

func Internal(format string, args ...any) *Error {
	return New(EInternal, "this is a bug in git agency; please report it", format, args...)
}

// Checkpoints.

func CheckpointDenylisted(files []string) *Error {
	return New(EDenylisted, "move the files out of the sandbox or add them to .gitignore; 'git config --add agency.checkpoint.denylist <glob>' adds patterns",
		"checkpoint skipped: untracked files match the checkpoint denylist").With(files...)
}

func CheckpointFailed(inv string, err error) *Error {
	return Wrap(ECheckpointFailed, err, "", "checkpoint of invocation %s failed", inv)
}

func CheckpointNotFound(inv string, id string) *Error {
	return New(ENotFound, "list them with 'git agency checkpoint ls --invocation "+inv+"'",
		"invocation %s has no checkpoint %s", inv, id)
}

func CheckpointGone(inv string, id string) *Error {
	return New(ENotFound, "list the ones that exist with 'git agency checkpoint ls --invocation "+inv+"'",
		"checkpoint %s of invocation %s no longer exists: its snapshot ref was deleted (gc)", id, inv)
}

func CheckpointApplyRunning(inv string) *Error {
	return New(EInvocationRunning, "stop it first with 'git agency agent stop "+inv+"'",
		"invocation %s is still running; refusing to roll its sandbox back", inv)
}

func CheckpointApplyDenylisted(files []string) *Error {
	return New(EDenylisted, "move the files out of the sandbox or add them to .gitignore, then retry",
		"cannot save the current state before the rollback: untracked files match the checkpoint denylist, and the rollback would delete them").With(files...)
}

// StopGaveUp: stop (or kill) --wait ended with the agent still running.
func StopGaveUp(inv, verb, wait string) *Error {
	return New(EInvocationRunning, "the "+verb+" request stands: see 'git agency agent show "+inv+"', wait longer with --wait, or 'git agency agent kill "+inv+"'",
		"invocation %s is still running %s after the %s request", inv, wait, verb)
}

// Usage is a command line the grammar rejects; help names the command
// whose --help explains it.
func Usage(msg, help string) *Error {
	return New(EUsage, "see '"+help+" --help'", "%s", msg)
}

// Landing (agent diff/land/discard, git sandbox).

func InvocationRunning(inv, verb string) *Error {
	return New(EInvocationRunning, "wait for it to finish ('git agency agent show "+inv+"'), or stop it with 'git agency agent stop "+inv+"'",
		"invocation %s is still running; cannot %s it", inv, verb)
}

func LandDirtyIntegration(name, tree string) *Error {
	return New(EDirtyWorktree, "commit or stash your changes in "+tree+" first; nothing was touched",
		"integration worktree %q has uncommitted changes; landing would mix them with the agent's", name)
}

// LandWouldOverwrite: the integration tree's files were in the way of a
// land's fast-forward; cause is git's refusal.
func LandWouldOverwrite(inv, tree string, cause error) *Error {
	return Wrap(EDirtyWorktree, cause, "move those files out of the way in "+tree+" and land again; nothing was applied",
		"landing %s would overwrite files in the integration tree", inv)
}

// LandFilesInTheWay: land (or --check) saw, before touching anything, that
// files in the integration tree are in the way of the land.
func LandFilesInTheWay(inv, tree string, paths []string) *Error {
	return New(EDirtyWorktree, "move those files out of the way in "+tree+" and land again; nothing was applied",
		"landing %s would overwrite files in the integration tree: %s", inv, strings.Join(paths, ", "))
}

// LandFastForwardFailed: moving the integration tree to the land's result
// failed other than by one git command (e.g. and putting it back failed too).
func LandFastForwardFailed(inv string, cause error) *Error {
	return Wrap(EGit, cause, "check 'git status' in the integration tree, then land again",
		"landing %s: updating the integration tree failed", inv)
}

// LandRecordNotUpdated: a land failed (report) and then its record at path
// could not be updated to say so (cause).
func LandRecordNotUpdated(report error, path string, cause error) *Error {
	var e *Error
	if !errors.As(report, &e) {
		e = Wrap(EInternal, report, "", "land failed")
	}
	return e.With(fmt.Sprintf("the land could not be recorded in %s: %v", path, cause))
}

func BaseMoved(branch, base, head string) *Error {
	return New(EBaseMoved, "land without --require-base to cherry-pick onto the current HEAD, or rebase by hand",
		"integration branch %s has moved since the sandbox was created (base %s, now %s)", branch, short(base), short(head))
}

func LandConflict(inv, commit, subject string, files []string) *Error {
	what := "its uncommitted changes"
	if commit != "" {
		what = "commit " + short(commit) + " (" + subject + ")"
	}
	e := New(ELandConflict, "the integration tree and the sandbox are untouched; inspect with 'git agency agent open "+inv+"', resolve there (or on the integration branch) and land again",
		"landing %s conflicts at %s in %d file(s)", inv, what, len(files))
	return e.With(files...)
}

func NothingToLand(inv string) *Error {
	return New(ENothingToLand, "discard it with 'git agency agent discard "+inv+"'",
		"nothing to land — sandbox has no commits and no uncommitted changes")
}

// NothingToLandTreeGone: no commits, and the sandbox tree (where any
// uncommitted work was) is gone.
func NothingToLandTreeGone(inv, tree string) *Error {
	return New(ENothingToLand, "discard it with 'git agency agent discard "+inv+"'",
		"nothing to land — its branch has no commits and its sandbox tree %s is gone", tree)
}

func NothingToLandDiscarded(inv string) *Error {
	return New(ENothingToLand, "start a new agent with 'git agency agent start'",
		"nothing to land — invocation %s was discarded", inv)
}

func AlreadyLanded(inv string) *Error {
	return New(EAlreadyLanded, "see the result with 'git agency agent show "+inv+"'",
		"invocation %s was already landed", inv)
}

func NoCommitsUseApply(inv string) *Error {
	return New(EUnlandedChanges, "review them with 'git agency agent diff "+inv+"'",
		"no commits to cherry-pick; use --apply to land working tree changes")
}

func UnlandedChanges(inv string) *Error {
	return New(EUnlandedChanges, "rerun with --apply to land them too, commit them in the sandbox, or review them with 'git agency agent diff "+inv+"'",
		"the sandbox has uncommitted changes besides its commits; landing only the commits would delete them with the sandbox")
}

func LandDenylisted(inv string, files []string) *Error {
	return New(EDenylisted, "delete them from the sandbox (or add them to .gitignore there) and land again; see the list with 'git config --get-all agency.checkpoint.denylist'",
		"the sandbox holds untracked files that are never landed (denylist); landing would lose them").With(files...)
}

func SandboxBranchMissing(inv, branch string) *Error {
	return New(EBranchNotFound, "the sandbox branch was deleted; discard the invocation with 'git agency agent discard "+inv+"'",
		"sandbox branch %s does not exist", branch)
}

func HasInvocations(name string, invs []string) *Error {
	return New(EHasInvocations, "wait for them, stop them ('git agency agent stop <id>'), or rerun with --force to stop and discard them",
		"worktree %q has %d running agent invocation(s)", name, len(invs)).With(invs...)
}

func short(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}

// Watch.

func NotHeaded(short string) *Error {
	return New(ENotHeaded, "press l for its logs", "invocation %s is headless: there is no terminal to attach to", short)
}

func SessionGone(short, status string) *Error {
	return New(ENotRunning, "press l for what it printed", "invocation %s is %s: its tmux session is gone", short, status)
}

func NoSession(short string) *Error {
	return New(ENotRunning, "wait for it to start", "invocation %s has no tmux session yet", short)
}

func EmptyIntegrationBranch(branch string) *Error {
	return New(EBranchNotFound, "commit something first", "integration branch %s has no commits", branch)
}

// MarkerInSandbox: the integration branch's commits track the marker, so a
// new sandbox checked out from it holds one.
func MarkerInSandbox() *Error {
	return New(EIntegrationTree, "remove .agency/INTEGRATION_MARKER from the branch's commits",
		"the new sandbox holds an integration marker; refusing to use it")
}

// NoSessionAfter: attach waited for a starting invocation's session in vain.
func NoSessionAfter(inv, waited string) *Error {
	return New(ENotRunning, "its setup may still run: see 'git agency agent show "+inv+"', and attach again",
		"invocation %s is still starting after %s: no tmux session yet", inv, waited)
}

func TmuxMissing() *Error {
	return New(ETmuxNotFound, "install tmux", "tmux is not on PATH")
}

func TreeGone(name, path string) *Error {
	return New(ENotFound, "remove the record with 'git agency worktree rm --force "+name+"'",
		"the tree of worktree %q is gone (%s)", name, path)
}

func SandboxGone(short, path string) *Error {
	return New(ENotFound, "it was landed or discarded; see 'git agency agent show "+short+"'",
		"the sandbox of %s is gone (%s)", short, path)
}

// Adopting an existing worktree.

func NotAWorktree(path string) *Error {
	return New(ENotAWorktree, "pass the directory of a linked worktree of this repository (see 'git worktree list')",
		"not a worktree of this repository: %s", path)
}

func MainWorktree(path string) *Error {
	return New(EMainWorktree, "adopt a linked worktree ('git worktree add …'), or create one with 'git agency worktree create --name N'",
		"refusing to adopt the main worktree: %s", path)
}

func OtherRepo(path, common string) *Error {
	return New(EOtherRepo, "run 'git agency worktree adopt' from inside that worktree's own repository",
		"%s belongs to another repository (%s)", path, common)
}

func AlreadyAdopted(path, name, id string) *Error {
	return New(EAlreadyAdopted, "it is already an integration worktree: use 'git agency worktree show "+name+"'",
		"%s is already integration worktree %q (%s)", path, name, id)
}

func AlreadyIntegrationTree(path string) *Error {
	return New(EAlreadyAdopted, "it holds .agency/INTEGRATION_MARKER; if no record owns it, delete that file and retry",
		"%s is already an integration worktree", path)
}

func ManagedTree(path string) *Error {
	return New(EAlreadyAdopted, "sandboxes belong to their invocation; land or discard it instead",
		"%s is a git agency sandbox, not a worktree to adopt", path)
}

func AdoptDetached(path string) *Error {
	return New(EDetachedHead, "check out a branch in that worktree first ('git -C <path> switch <branch>')",
		"the worktree at %s has a detached HEAD; an integration worktree needs a branch", path)
}

func AdoptNameTaken(name, id string) *Error {
	return New(ENameTaken, "choose a name with --name",
		"a worktree named %q already exists (%s)", name, id)
}

// Health checks.

func Unhealthy(n int) *Error {
	e := New(EUnhealthy, "each finding above has its own hint; 'git agency gc' removes leftovers",
		"doctor found %d problem(s)", n)
	return e
}

// Review fixes: landing safety.

func LandNestedRepo(inv string, paths []string) *Error {
	return New(ENestedRepo, "its commits exist only inside it: move it out of the sandbox, or remove its .git and land its files; see 'git agency agent open "+inv+"'",
		"the sandbox of %s holds a git repository of its own; refusing to land and delete it", inv).With(paths...)
}

func SandboxHeadAstray(inv, where string) *Error {
	return New(EUnlandedChanges, "check out its branch in the sandbox ('git agency agent open "+inv+"'), or save those commits on a branch of their own",
		"the sandbox of %s has HEAD %s, not on its branch: commits there would not land and would be lost with the sandbox", inv, where)
}

func WrongBranch(name, tree, has, want string) *Error {
	return New(EWrongBranch, "switch it back: git -C "+tree+" switch "+want,
		"integration worktree %q has %s checked out, not its branch %s", name, has, want)
}

func CheckpointApplyStaged(inv string, paths []string) *Error {
	return New(EDirtyWorktree, "commit them, or stage the files as they are (git add), in the sandbox ('git agency agent open "+inv+"'), then roll back",
		"the sandbox of %s has staged changes that differ from its files; a rollback would lose the staged version", inv).With(paths...)
}

// Undo (`git agency undo`): every refusal changes nothing.

func NothingToUndo() *Error {
	return New(ENothingToUndo, "'git agency undo --list' shows the operation log",
		"nothing to undo: no land, discard, checkpoint apply or worktree rm --force that was not undone already")
}

func UndoLandMoved(inv, branch, before, after string) *Error {
	return New(EChangedSince, "revert the land instead, in the integration tree: git revert --no-edit "+before+".."+after,
		"the integration branch %s moved since invocation %s was landed; nothing was touched", branch, inv)
}

func UndoLandGone(inv, branch string) *Error {
	return New(EChangedSince, "the land is no longer on the branch: look at 'git log "+branch+"'",
		"the integration branch %s no longer holds the land of invocation %s and moved on; nothing was touched", branch, inv)
}

func UndoDirtyIntegration(name, tree string) *Error {
	return New(EDirtyWorktree, "commit or stash your changes in "+tree+" first, then undo again; nothing was touched",
		"integration worktree %q has uncommitted changes", name)
}

func UndoBranchMoved(what, branch, want, got string) *Error {
	return New(EChangedSince, "undoing would put the old files on top of the new commits; check out the branch and restore by hand ('git agency checkpoint ls')",
		"%s: branch %s moved since (was %.12s, is %.12s); nothing was touched", what, branch, want, got)
}

func UndoTreeExists(what, path string) *Error {
	return New(EChangedSince, "move it away (or remove it) first, then undo again",
		"%s: %s exists again; nothing was touched", what, path)
}

func UndoStatusChanged(inv, want, got string) *Error {
	return New(EChangedSince, "see it with 'git agency agent show "+inv+"'",
		"invocation %s is %s, not %s as the operation left it; nothing was touched", inv, got, want)
}

func UndoSandboxChanged(inv string) *Error {
	return New(EChangedSince, "take a checkpoint of it ('git agency checkpoint create -i "+inv+"') and roll back with 'git agency checkpoint apply'",
		"the sandbox of %s changed since the checkpoint was applied; nothing was touched", inv)
}

func UndoExpired(what, missing string) *Error {
	return New(EUndoExpired, "it can never be undone: 'git agency undo --skip' passes it by, so the next undo reaches older operations ('git agency gc' removes what undo needs only after --older-than, or with --force)",
		"cannot undo %s: %s is gone; nothing was touched", what, missing)
}

func UndoNeedsTree(what, name, branch, before, after string) *Error {
	return New(EArchived, "its branch "+branch+" is kept: revert the land on it instead (git revert --no-edit "+before+".."+after+")",
		"cannot undo %s: worktree %q was removed since; nothing was touched", what, name)
}

// Follow-up prompts (agent send).

func SendBusy(inv string) *Error {
	return New(EInvocationRunning, "wait for it to finish ('git agency agent logs -f "+inv+"'), then send again; nothing was changed",
		"invocation %s is still working; a headless agent takes a follow-up only once it has finished", inv)
}

func SendStarting(inv string) *Error {
	return New(EInvocationRunning, "wait until 'git agency agent show "+inv+"' says running, then send again",
		"invocation %s is still starting", inv)
}

func SendQueued(inv string) *Error {
	return New(EInvocationRunning, "wait until it has run (or start it now with 'git agency agent start --now "+inv+"'), then send again; nothing was changed",
		"invocation %s is queued: it has not run yet, so there is no conversation to continue", inv)
}

// SendClosed refuses a follow-up to an invocation that was landed
// (E_ALREADY_LANDED) or discarded (E_DISCARDED).
func SendClosed(inv string, code Code, how string) *Error {
	return New(code, "start a new agent with 'git agency agent start'; nothing was changed",
		"invocation %s was %s; its sandbox is gone, so it takes no more prompts", inv, how)
}

func SendPromptEmpty() *Error {
	return New(EPromptEmpty, "write a prompt, or pass --prompt / --prompt-file; nothing was changed", "the prompt is empty")
}

func NoSessionID(inv, runner string) *Error {
	return New(ENoSession, "start a new agent with 'git agency agent start'; nothing was changed",
		"invocation %s has no session id: runner %q never reported one, so its conversation cannot be resumed", inv, runner)
}

func NoResume(inv, runner string) *Error {
	return New(ENoResume, "tell git-agency how to resume it: git config --add agency.runner."+runner+".resumeArg '<arg with {session_id}>'; nothing was changed",
		"runner %q of invocation %s has no resume support", runner, inv)
}

func TooManyActive(n, max int) *Error {
	return New(ETooManyActive, "wait for one to finish, stop one, queue this one with --queue (or git config agency.queue true), or raise git config agency.maxActive",
		"%d agents are running in this repository (agency.maxActive = %d)", n, max)
}

func NotQueued(inv, state string) *Error {
	return New(ENotQueued, "only a queued invocation can be started with --now; list the queue with 'git agency agent ls'",
		"invocation %s is not queued (it is %s)", inv, state)
}

func PromptNotUTF8(offset int) *Error {
	return New(EPromptInvalid, "runners take text: save the prompt as UTF-8 and start again; nothing was created",
		"the prompt is not valid UTF-8 (first bad byte at offset %d)", offset)
}

func PromptNUL(offset int) *Error {
	return New(EPromptInvalid, "remove the NUL bytes (a program's argument cannot hold one); nothing was created",
		"the prompt holds a NUL byte at offset %d", offset)
}

func PromptTooLong(size string, max int, how string) *Error {
	return New(EPromptInvalid, "shorten the prompt, or put the long part in a file in the worktree and point the prompt at it; nothing was created",
		"the prompt is too long to run %s: %s bytes, at most %d", how, size, max)
}

// RunStartFailed is `run`'s error when its agent did not start: the
// start's own error, saying what became of the worktree run had created
// (removed again, kept with why, or not removable).
func RunStartFailed(err error, name, kept string, undoErr error) *Error {
	e := As(err)
	switch {
	case undoErr != nil:
		return e.With(fmt.Sprintf("the new worktree %q could not be removed again: %s", name, As(undoErr).Msg))
	case kept != "":
		return e.With(fmt.Sprintf("the new worktree %q was kept: %s", name, kept))
	}
	return e.With(fmt.Sprintf("the new worktree %q was removed again; nothing was left", name))
}

// OpenFailedHint follows the warning of `worktree create --open` whose
// editor failed: the worktree stands.
func OpenFailedHint(name string) string {
	return "the worktree was created all the same; open it with 'git agency worktree open " + name + "'"
}

func NowWithWorktree() *Error {
	return New(EUsage, "start a queued invocation with --now alone", "--now and --worktree cannot be combined")
}

func StartNeedsWorktree(prog string) *Error {
	return New(EUsage, "see '"+prog+" agent start --help'", "missing flags: --worktree=STRING (or --now INVOCATION)")
}

func AllReposWithWorktree() *Error {
	return New(EUsage, "list one repository's worktree with --worktree alone (and --repo PATH for another repository)", "--all-repos and --worktree cannot be combined")
}

func RepoGone(repoID string) *Error {
	return New(ENotFound, "its records are kept under the data directory's repos/"+repoID+"; run git agency in the repository's new place to relink them",
		"the repository of these records is gone (moved or deleted)")
}

// IncludeInvalid: a malformed .worktreeinclude or agency.include pattern.
func IncludeInvalid(source string, line int, why string) *Error {
	return New(EIncludeInvalid, "fix the pattern (gitignore syntax, one per line); nothing was created",
		"%s:%d: %s", source, line, why)
}

// IncludeOutside: a pattern that names a path outside the repository.
func IncludeOutside(source string, line int, pattern string) *Error {
	return New(EIncludeOutside, "patterns are relative to the repository root and cannot leave it; nothing was created",
		"%s:%d: pattern %q names a path outside the repository", source, line, pattern)
}

// CopyFailed: copying an included file failed; the new tree was rolled back.
func CopyFailed(path string, err error) *Error {
	return Wrap(ECopyFailed, err, "free some space (or fix the file's permissions) and retry; the new tree and its branch were removed",
		"cannot copy included file %s", path)
}

// SetupInvalid: a malformed project setup file.
func SetupInvalid(file string, err error) *Error {
	return Wrap(ESetupInvalid, err, "fix the file, or set git config agency.setup to override it",
		"cannot read the setup in %s", file)
}

// SetupWorkingDiffers is the note `setup show` and `approve` print for a
// setup file with uncommitted edits.
func SetupWorkingDiffers(file string) string {
	return fmt.Sprintf("note: your working copy of %s differs from its commit; sandboxes get the committed content shown here (commit your edits to run them)", file)
}

// SetupNotApproved is the one line `agent start` prints when a project
// setup exists but its content was not approved.
func SetupNotApproved(sources string) string {
	return fmt.Sprintf("note: the setup in %s is not approved and did not run; review it with 'git agency setup show', then 'git agency setup approve'", sources)
}

// NoSetup: `setup approve` with nothing declared.
func NoSetup(files string) *Error {
	return New(ENotFound, "declare one in "+files+", or set git config agency.setup",
		"there is no project setup to approve")
}

// SetupHashTooShort: `setup approve --sha256` with too little of a hash to
// pin the content the user reviewed.
func SetupHashTooShort(want string, min int) *Error {
	return New(EUsage, "pass the sha256 'git agency setup show' prints (or its first 12 digits or more)",
		"--sha256 %s: want at least %d hex digits of the sha256", want, min)
}

// SetupChanged: `setup approve --sha256` for content that has changed.
func SetupChanged(have, want string) *Error {
	return New(ESetupInvalid, "run 'git agency setup show' again and approve what it prints now",
		"the setup changed: its sha256 is %s, not %s", have, want)
}

// CleanupFailed is err (its code, message and hint) with what the cleanup
// after it could not undo: a failure must not hide that it left something
// behind.
func CleanupFailed(err, cleanup error) error {
	if cleanup == nil {
		return err
	}
	var e *Error
	if !errors.As(err, &e) {
		e = Wrap(EInternal, err, "", "failed")
	}
	out := e.With("cleaning up after this failure left something behind: " + cleanup.Error())
	out.Hint = strings.TrimPrefix(e.Hint+"; 'git agency doctor' lists what was left behind", "; ")
	return out
}

// EventNotRecorded is the warning when an event could not be appended to
// events.jsonl: the record itself is right, its history lacks a line.
func EventNotRecorded(inv, event string, cause error) *Error {
	return Wrap(EIO, cause, "the record itself is up to date; check the data directory's free space and permissions",
		"invocation %s: the %q event was not recorded in events.jsonl", inv, event)
}

func UndoBranchCheckedOut(what, branch, path string) *Error {
	return New(EChangedSince, "switch that tree to another branch (or remove it), then undo again",
		"%s: branch %s is checked out at %s; nothing was touched", what, branch, path)
}

// LeftoversAlive: processes the agent left behind would not stop; the
// sandbox they write into is kept.
func LeftoversAlive(inv string, pids []int) *Error {
	return New(EInvocationRunning, fmt.Sprintf("stop them (kill %v), then discard again", pids),
		"processes %s left behind still run in its sandbox (pids %v); the sandbox was kept", inv, pids)
}

// LandSubmoduleUnpublished: the land would point submodule path at commit,
// which only the sandbox's own submodule repository holds (git keeps it
// under the sandbox's .git/worktrees/<x>/modules/, which goes with the
// sandbox).
func LandSubmoduleUnpublished(inv, path, commit, sandbox string) *Error {
	return New(ELandSubmodule, "publish it first: 'git -C "+sandbox+"/"+path+" push origin "+commit+":refs/heads/<branch>' (then fetch), and land again; nothing was touched",
		"landing %s would point submodule %s at %s, a commit that exists only in the sandbox's copy of the submodule and would be lost with it", inv, path, commit)
}
