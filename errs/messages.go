package errs

import (
	"fmt"
	"strings"
)

// All user-facing wording. Lower case, say what happened, then the fix.

func NotARepo(dir string) *Error {
	return New(ENotARepo, "run git agency from inside a git repository (its main worktree or any linked worktree)",
		"not a git repository: %s", dir)
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

func CheckpointApplyRunning(inv string) *Error {
	return New(EInvocationRunning, "stop it first with 'git agency agent stop "+inv+"'",
		"invocation %s is still running; refusing to roll its sandbox back", inv)
}

func SandboxGone(inv string) *Error {
	return New(ENotFound, "its snapshot refs are kept: inspect one with 'git show refs/agency/snapshots/"+inv+"/<n>'",
		"the sandbox of invocation %s no longer exists", inv)
}

func CheckpointApplyDenylisted(files []string) *Error {
	return New(EDenylisted, "move the files out of the sandbox or add them to .gitignore, then retry",
		"cannot save the current state before the rollback: untracked files match the checkpoint denylist, and the rollback would delete them").With(files...)
}
