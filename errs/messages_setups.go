package errs

import (
	"strings"
	"time"
)

// Git setups: user configuration and repository layouts that git-agency
// refuses with a cause and a fix, before anything moves.

// NoIdentity: land writes commits as the user, and git knows no identity.
func NoIdentity(inv string, cause string) *Error {
	e := New(ENoIdentity, "tell git who you are: git config --global user.name 'Your Name' && git config --global user.email you@example.com; then land again",
		"landing %s writes commits as you, and git has no identity for you (user.name and user.email are unset); nothing was touched", inv)
	if c := lastLine(cause); c != "" {
		e = e.With(c)
	}
	return e
}

// SigningFailed: commit.gpgsign asks land to sign its commits and the key
// could not sign; cause is git's (gpg's, ssh-keygen's) message.
func SigningFailed(inv string, cause error) *Error {
	return Wrap(ESigningFailed, cause, "make the key in user.signingkey usable (gpg.format says which program signs), or land unsigned once: git -c commit.gpgsign=false agency agent land "+inv,
		"commit.gpgsign is set and signing the commits land writes for %s failed; nothing was touched", inv)
}

// HookFailed: the repository's post-checkout hook failed in `git worktree
// add` of a new tree (output is what it printed), which was removed.
func HookFailed(hook, tree, output string) *Error {
	e := New(EHookFailed, "fix the hook, or skip the repository's hooks for one command: git -c core.hooksPath=/dev/null agency …",
		"the repository's post-checkout hook %s failed while git made the new tree %s; the tree was removed", hook, tree)
	for _, l := range strings.Split(strings.TrimRight(output, "\n"), "\n") {
		if l != "" {
			e = e.With("hook: " + l)
		}
	}
	return e
}

// HookSlow: the repository's post-checkout hook has run for a while in a
// new tree (said while it runs; not an error).
func HookSlow(hook, tree string, after time.Duration) *Error {
	return New(EHookFailed, "every new sandbox and worktree runs it; to skip the repository's hooks for one command: git -c core.hooksPath=/dev/null agency …",
		"the repository's post-checkout hook %s has been running for %s in the new tree %s", hook, after, tree)
}

// BranchAgency: a branch named agency exists, so no branch agency/… can.
func BranchAgency(branch string) *Error {
	return New(EBranchAgency, "rename it: git branch -m "+branch+" <new-name>",
		"the branch %q is in the way: git-agency keeps its branches under agency/, and git cannot have both a branch agency and branches agency/…", branch)
}

// AgencyDirTracked: the commit a new tree checks out has files under
// .agency/, where git-agency writes its marker and .gitignore (which
// would change the user's tracked files, and hide their changes from
// land).
func AgencyDirTracked(commit string) *Error {
	return New(EAgencyDir, "move it elsewhere and commit that (git mv .agency <new-name>), then run the command again",
		"the repository tracks files under .agency/ (at %s), the directory git-agency keeps in each of its trees; nothing was made", commit)
}

// AgencyDirInTree: a tree to adopt has a .agency/ of its own (tracked or
// not), where git-agency writes its marker and a .gitignore of `*`, which
// would overwrite the user's .gitignore there and hide their files.
func AgencyDirInTree(tree string) *Error {
	return New(EAgencyDir, "move it elsewhere (git mv .agency <new-name> and commit, or mv for files git does not track), then run the command again",
		"the worktree at %s has a .agency/ of its own, the directory git-agency keeps in each of its trees; nothing was written", tree)
}

// NoMainWorktree: a bare repository used through GIT_DIR and
// GIT_WORK_TREE (the dotfiles layout) has no main worktree git-agency can
// run in or lend its files.
func NoMainWorktree(gitDir string) *Error {
	return New(ENoMainWorktree, "git-agency needs a repository with a working tree: clone it (git clone "+gitDir+" <dir>) and run git agency there, or add one with git --git-dir="+gitDir+" worktree add <dir> and run git agency in it",
		"the repository %s is bare and is used through GIT_DIR / GIT_WORK_TREE; git-agency does not support that layout", gitDir)
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}

// MidOperation is a dirty-tree refusal for a tree in the middle of a merge
// (cherry-pick, revert, rebase), where stashing cannot be done: e's hint
// is replaced by finishing or aborting it.
func MidOperation(e *Error, op, tree string) *Error {
	c := *e
	c.Hint = "finish the " + op + " (resolve, then git " + continueCmd(op) + ") or abort it (git " + op + " --abort) in " + tree + " first; nothing was touched"
	c.Msg += "; it is in the middle of a " + op
	return &c
}

func continueCmd(op string) string {
	if op == "merge" {
		return "commit"
	}
	return op + " --continue"
}
