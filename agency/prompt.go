package agency

import (
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/git-agency/git-agency/errs"
	"github.com/git-agency/git-agency/runner"
	"github.com/git-agency/git-agency/wall"
)

// MaxPromptBytes bounds a headless prompt: it is one argument of the
// runner, and Linux refuses an argument longer than MAX_ARG_STRLEN (128
// KiB, its NUL included) with E2BIG. It also bounds what is read from
// --prompt-file or the editor.
const MaxPromptBytes = 128*1024 - 1

// MaxHeadedArgvBytes bounds the runner's whole command line (prompt
// included) in headed mode: tmux refuses a command over 16 KiB ("command
// too long"), and the session's directory, environment, log pipe and
// options take the rest.
const MaxHeadedArgvBytes = 12 * 1024

// maxArgvBytes bounds a headless command line as a whole (ARG_MAX is 2 MiB
// on most systems, shared with the environment).
const maxArgvBytes = 1024 * 1024

// readPrompt reads a prompt from r, at most MaxPromptBytes: a larger one
// (or an endless one, /dev/zero) is E_PROMPT_INVALID, not an exhausted
// memory.
func readPrompt(r io.Reader, name string) (string, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxPromptBytes+1))
	if err != nil {
		return "", errs.IO("read", name, err)
	}
	if len(data) > MaxPromptBytes {
		return "", errs.PromptTooLong("more than "+strconv.Itoa(MaxPromptBytes), MaxPromptBytes, "(read from "+name+")")
	}

	return string(data), nil
}

// ReadPromptFile is readPrompt on a file.
func ReadPromptFile(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", errs.IO("read", path, err)
	}
	defer f.Close()
	return readPrompt(f, path)
}

// checkPrompt refuses a prompt that cannot reach the runner byte for byte:
// not UTF-8 (records are JSON, which would turn such bytes into U+FFFD, and
// runners take text), a NUL byte (no argument can hold one), or a command
// line too long for execve (headless) or tmux (headed).
// paths are the sandbox's (or, before it exists, ones as long).
func checkPrompt(spec runner.Spec, opts StartOptions, paths runner.Paths) error {
	p := opts.Prompt
	if i := strings.IndexByte(p, 0); i >= 0 {
		return errs.PromptNUL(i)
	}

	if !utf8.ValidString(p) {
		for i, r := range p {
			if r == utf8.RuneError {
				if _, n := utf8.DecodeRuneInString(p[i:]); n <= 1 {
					return errs.PromptNotUTF8(i)
				}
			}
		}
	}

	total := 0
	for _, a := range spec.Argv(opts.Headless, opts.RunnerArgs, p, paths) {
		total += len(a) + 1
		if opts.Headless && len(a) > MaxPromptBytes {
			return errs.PromptTooLong(strconv.Itoa(len(a)), MaxPromptBytes, "headless (one argument)")
		}
	}

	if opts.Headless && total > maxArgvBytes {
		return errs.PromptTooLong(strconv.Itoa(total), maxArgvBytes, "headless (the whole command line)")
	}
	if !opts.Headless && total > MaxHeadedArgvBytes {
		return errs.PromptTooLong(strconv.Itoa(total), MaxHeadedArgvBytes, "headed (tmux takes a command of at most 16 KiB)")
	}

	return nil
}

// runnerPaths are what runner arguments name for the sandbox at tree (no
// git directory when its .git does not name one of this repository's).
func (a *App) runnerPaths(tree string) runner.Paths {
	gitDir, _ := wall.SandboxGitDir(tree, a.Repo.CommonDir)
	return runner.Paths{Sandbox: tree, GitDir: gitDir, CommonDir: a.Repo.CommonDir}
}

// plannedRunnerPaths are runnerPaths for a sandbox not made yet: its git
// directory is named after the tree's base name, as git names it.
func (a *App) plannedRunnerPaths(tree string) runner.Paths {
	return runner.Paths{Sandbox: tree, GitDir: filepath.Join(a.Repo.CommonDir, "worktrees", filepath.Base(tree)), CommonDir: a.Repo.CommonDir}
}
