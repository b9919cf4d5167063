package errs

import "strings"

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
		"the repository's %s hook failed while git made the new tree %s; the tree was removed", hook, tree)
	for _, l := range strings.Split(strings.TrimRight(output, "\n"), "\n") {
		if l != "" {
			e = e.With("hook: " + l)
		}
	}
	return e
}

// BranchAgency: a branch named agency exists, so no branch agency/… can.
func BranchAgency(branch string) *Error {
	return New(EBranchAgency, "rename it: git branch -m "+branch+" <new-name>",
		"the branch %q is in the way: git-agency keeps its branches under agency/, and git cannot have both a branch agency and branches agency/…", branch)
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
