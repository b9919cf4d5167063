package errs

import (
	"errors"
	"fmt"
	"strings"
)

// All user-facing wording, in this file and messages_agents.go (undo, send,
// run, include, setup, cleanup). Lower case, say what happened, then the fix.

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
	return New(EBareRepo, "run git agency from a linked worktree of it (git worktree add <dir> <branch>, then cd <dir>), or from a non-bare clone",
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

// NotFoundDidYouMean is NotFound when a name close to the query exists.
func NotFoundDidYouMean(kind, query, name string) *Error {
	e := NotFound(kind, query)
	e.Hint = "did you mean '" + name + "'? " + e.Hint
	return e
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

// Interrupted: the command was interrupted (Ctrl-C, SIGTERM) while doing
// what, before it changed anything.
func Interrupted(what string) *Error {
	return New(EInterrupted, "nothing was changed; run the command again",
		"interrupted while %s", what)
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

// NoEditorOr is NoEditor for a command that can go on without opening an
// editor: the hint also names the flag that says so.
func NoEditorOr(flag string) *Error {
	return New(ENoEditor, "pass --editor, set one with 'git config agency.editor code' (or $VISUAL / $EDITOR), or add "+flag,
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

// NoMarker: an integration tree has a .agency/ without its marker.
func NoMarker(name, marker, dir string) *Error {
	return New(ENotIntegration, "move that .agency/ aside (mv "+shellQuote(dir)+" "+shellQuote(dir+".bak")+"); then 'git agency agent start -w "+name+"' writes the marker again",
		"worktree %q has no integration marker at %s", name, marker)
}

// MarkerRestored: an integration tree had lost its .agency/ (a `git clean
// -x` removes it); agent start wrote the marker again (a warning).
func MarkerRestored(name, tree string) *Error {
	return New(ENotIntegration, "",
		"worktree %q had lost its .agency/ (a 'git clean -x' removes it); its integration marker was written again in %s", name, tree)
}

// DataDirRelative: $AGENCY_DATA_DIR is not an absolute path.
func DataDirRelative(dir string) *Error {
	return New(EConfig, "set it to an absolute path, e.g. export AGENCY_DATA_DIR=\"$HOME/"+dir+"\"",
		"AGENCY_DATA_DIR is a relative path (%s): it would name another data directory from every subdirectory", dir)
}

// DataDirMoved: the data directory was moved; its records and git's
// registrations of its trees name the old place.
func DataDirMoved(from, to string) *Error {
	return New(ENotFound, "move it back: mv "+shellQuote(to)+" "+shellQuote(from)+", and point AGENCY_DATA_DIR (or agency.dataDir) at "+shellQuote(from)+" again if you changed it",
		"the data directory was moved: its records name trees under %s, and it is now %s", from, to)
}

// WorktreeMoved: a worktree's tree was moved with `git worktree move`;
// the record still names its old path.
func WorktreeMoved(name, from, to string) *Error {
	return New(ENotFound, "move it back: git worktree move "+shellQuote(to)+" "+shellQuote(from),
		"worktree %q was moved to %s (its record names %s)", name, to, from)
}

func Git(args []string, exit int, stderr string) *Error {
	msg := fmt.Sprintf("git %s failed (exit %d)", strings.Join(args, " "), exit)
	if s := strings.TrimSpace(stderr); s != "" {
		msg += ": " + s
	}
	return New(EGit, refHookHint(stderr), "%s", msg)
}

// refHookHint is the hint for git's message when the repository's
// reference-transaction hook refused a ref update ("" for any other
// message): git-agency keeps its checkpoints and undo state under
// refs/agency/, which such a hook must let through.
func refHookHint(gitMsg string) string {
	if !strings.Contains(gitMsg, "aborted by hook") {
		return ""
	}
	return "the repository's reference-transaction hook refused a ref under refs/agency/ (its message is above): " +
		"let the hook accept refs/agency/*, or run the command again without the repository's hooks: git -c core.hooksPath=/dev/null agency <the same arguments>"
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
	return Wrap(ECheckpointFailed, err, refHookHint(fmt.Sprint(err)), "checkpoint of invocation %s failed", inv)
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

// UsageInvocationFlag is Usage for an argument where the command takes
// the invocation as -i.
func UsageInvocationFlag(msg, cmd, arg string) *Error {
	return New(EUsage, "name the invocation with -i: "+cmd+" -i "+arg+" (see '"+cmd+" --help')", "%s", msg)
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
	return New(ENothingToLand, "'git agency undo' brings a discarded sandbox back (when the discard is the last operation), then land again; or start a new agent with 'git agency agent start'",
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

// SandboxRemoved is SandboxGone for an invocation still waiting to land:
// another program removed its tree.
func SandboxRemoved(short, path string) *Error {
	return New(ENotFound, "its checkpoints keep its work: 'git agency checkpoint ls --invocation "+short+"'; drop it with 'git agency agent discard "+short+"'",
		"the sandbox of %s is gone (%s): it was removed outside git-agency", short, path)
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
	return New(EWrongBranch, "switch it back: git -C "+shellQuote(tree)+" switch "+want,
		"integration worktree %q has %s checked out, not its branch %s", name, has, want)
}

// WrongBranchRenamed is WrongBranch when the recorded branch is gone and
// the tree has another: the user renamed it (`git branch -m`) there.
func WrongBranchRenamed(name, tree, has, want string) *Error {
	return New(EWrongBranch, "rename it back: git -C "+shellQuote(tree)+" branch -m "+has+" "+want,
		"integration worktree %q has branch %s checked out, and its branch %s is gone (renamed?)", name, has, want)
}

func CheckpointApplyStaged(inv string, paths []string) *Error {
	return New(EDirtyWorktree, "commit them, or stage the files as they are (git add), in the sandbox ('git agency agent open "+inv+"'), then roll back",
		"the sandbox of %s has staged changes that differ from its files; a rollback would lose the staged version", inv).With(paths...)
}

// NoSuchCommand: `help` was asked about words that name no command.
func NoSuchCommand(prog, words string) *Error {
	return New(EUsage, "'"+prog+" help' lists the commands", "no command %q in %s", words, prog)
}

// shellQuote is s as one shell word: as it is when it needs no quoting,
// else in single quotes, so a hint with a path can be pasted.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:@+=,") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
