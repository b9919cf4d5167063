package errs

import (
	"errors"
	"fmt"
	"strings"
)

// The rest of the wording (see messages.go): undo, follow-up prompts, run,
// ready sandboxes, cleanup.

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
	hint := "start a new agent with 'git agency agent start'; nothing was changed"
	if code == EDiscarded {
		// A discard is the last operation undo can take back.
		hint = "'git agency undo' brings a discarded sandbox back (when the discard is the last operation), then send again; or start a new agent with 'git agency agent start'; nothing was changed"
	}
	return New(code, hint, "invocation %s was %s; its sandbox is gone, so it takes no more prompts", inv, how)
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
		"%s running in this repository (agency.maxActive = %d)", agentsAre(n), max)
}

// agentsAre is "1 agent is" or "N agents are".
func agentsAre(n int) string {
	if n == 1 {
		return "1 agent is"
	}
	return fmt.Sprintf("%d agents are", n)
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
	return New(EUsage, "run it inside an integration worktree, or name one with -w; see '"+prog+" agent start --help'", "missing flags: --worktree=STRING (or --now INVOCATION)")
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

// LandSubmoduleDirty: submodules of the sandbox have changed or untracked
// files inside them, which no land (or checkpoint) can take: the land
// would remove them with the sandbox.
func LandSubmoduleDirty(inv, sandbox string, paths []string) *Error {
	return New(EUnlandedChanges, "commit them inside the submodule (the land then takes its new commit, once published) or remove them: 'git -C "+sandbox+"/"+paths[0]+" status'; nothing was touched",
		"the sandbox of %s has uncommitted changes inside submodule %s, which land cannot take and would remove with the sandbox", inv, strings.Join(paths, ", ")).With(paths...)
}

// AgencyMissing: the program whose hidden commands start a supervisor or
// report a hook is neither beside the running program nor on PATH.
func AgencyMissing(program string) *Error {
	return New(EInternal, "install "+program+" beside git-agency-watch, or put it on PATH",
		"cannot find %s, which runs the supervisor", program)
}

// PromptFlagEmpty: --prompt was given with nothing in it.
func PromptFlagEmpty() *Error {
	return New(EPromptEmpty, "write the prompt after --prompt, or leave the flag out to write it in your editor; nothing was created",
		"the prompt given with --prompt is empty")
}

// UnseenEditsNote: the integration tree an agent starts from has
// uncommitted changes, which its sandbox (made from the last commit) lacks.
func UnseenEditsNote(worktree string) string {
	return "worktree " + worktree + " has uncommitted changes: the agent starts from its last commit and will not see them (commit them first for an agent to work on them)"
}

// AttachEnded: attach's tmux client could not attach because the headed
// run ended meanwhile.
func AttachEnded(inv, status string) *Error {
	return New(ENotRunning, "its last screen is in 'git agency agent logs "+inv+"'",
		"invocation %s ended before it could be attached (status %s)", inv, status)
}

// UnknownRunner: --runner names no built-in and no configured runner;
// known are those a start can use (the built-ins and the configured ones).
func UnknownRunner(name string, known []string) *Error {
	return New(ERunnerNotFound,
		"use one of the runners this repository knows ("+strings.Join(known, ", ")+"), or configure it: git config agency.runner."+name+".command <program>",
		"unknown runner %q", name)
}
