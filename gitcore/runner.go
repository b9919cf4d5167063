// Package gitcore is the only place that runs git. It exposes one method per
// git operation with typed results, built on two private primitives (query
// and run), parses only machine formats, and takes a CommandRunner so tests
// can inject failures.
package gitcore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
)

// Cmd is one git invocation.
type Cmd struct {
	Dir   string
	Args  []string // without the leading "git"
	Env   []string // the complete environment
	Stdin io.Reader
}

// Result is what a git invocation produced.
type Result struct {
	Stdout   []byte
	Stderr   []byte
	ExitCode int
}

// CommandRunner runs git. ExecRunner is the real one; tests wrap it to fail
// on a chosen call.
type CommandRunner interface {
	Run(ctx context.Context, c Cmd) (Result, error)
}

// ExecRunner runs the git binary found on PATH.
type ExecRunner struct{}

// Run executes git. A non-zero exit is returned as a *GitError; an error
// starting git at all is returned as is.
func (ExecRunner) Run(ctx context.Context, c Cmd) (Result, error) {
	cmd := exec.CommandContext(ctx, "git", c.Args...)
	cmd.Dir = c.Dir
	cmd.Env = c.Env
	cmd.Stdin = c.Stdin
	var out, errb bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &errb
	err := cmd.Run()
	res := Result{Stdout: out.Bytes(), Stderr: errb.Bytes()}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		res.ExitCode = ee.ExitCode()
		return res, &GitError{Args: c.Args, ExitCode: res.ExitCode, Stderr: string(res.Stderr)}
	}
	return res, err
}

// GitError is a git command that exited non-zero. Its stderr reaches the
// user verbatim inside our message.
type GitError struct {
	Args     []string
	ExitCode int
	Stderr   string
}

func (e *GitError) Error() string {
	msg := fmt.Sprintf("git %s: exit %d", strings.Join(e.Args, " "), e.ExitCode)
	if s := strings.TrimSpace(e.Stderr); s != "" {
		msg += ": " + s
	}
	return msg
}

// ExitCode returns the git exit code in err, or -1.
func ExitCode(err error) int {
	var ge *GitError
	if errors.As(err, &ge) {
		return ge.ExitCode
	}
	return -1
}

// localEnvVars is `git rev-parse --local-env-vars` (git 2.39): the variables
// that pin git to one repository. They are stripped for every call that acts
// on a tree we name explicitly. GIT_CONFIG_PARAMETERS and GIT_CONFIG_COUNT
// (from `git -c k=v agency`) are deliberately kept.
var localEnvVars = map[string]bool{
	"GIT_ALTERNATE_OBJECT_DIRECTORIES": true,
	"GIT_CONFIG":                       true,
	"GIT_OBJECT_DIRECTORY":             true,
	"GIT_DIR":                          true,
	"GIT_WORK_TREE":                    true,
	"GIT_IMPLICIT_WORK_TREE":           true,
	"GIT_GRAFT_FILE":                   true,
	"GIT_INDEX_FILE":                   true,
	"GIT_NO_REPLACE_OBJECTS":           true,
	"GIT_REPLACE_REF_BASE":             true,
	"GIT_PREFIX":                       true,
	"GIT_INTERNAL_SUPER_PREFIX":        true,
	"GIT_SHALLOW_FILE":                 true,
	"GIT_COMMON_DIR":                   true,
}

// CleanEnv returns env without git's repository-pinning variables, with
// LC_ALL=C and GIT_TERMINAL_PROMPT=0 set. extra entries are appended last
// (and so win).
func CleanEnv(env []string, extra ...string) []string {
	out := make([]string, 0, len(env)+len(extra)+2)
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if localEnvVars[k] || k == "LC_ALL" || k == "GIT_TERMINAL_PROMPT" {
			continue
		}
		out = append(out, kv)
	}
	out = append(out, "LC_ALL=C", "GIT_TERMINAL_PROMPT=0")
	return append(out, extra...)
}

// UserEnv is the process environment with only LC_ALL and
// GIT_TERMINAL_PROMPT forced: it respects what git exported to us, for the
// discovery of the user's own repository.
func UserEnv(extra ...string) []string {
	out := []string{}
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if k == "LC_ALL" || k == "GIT_TERMINAL_PROMPT" {
			continue
		}
		out = append(out, kv)
	}
	out = append(out, "LC_ALL=C", "GIT_TERMINAL_PROMPT=0")
	return append(out, extra...)
}

// StripRepoEnv returns env without git's repository-pinning variables and
// nothing forced: the environment an agent or a user script gets.
func StripRepoEnv(env []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if localEnvVars[k] || k == "GIT_EXEC_PATH" {
			continue
		}
		out = append(out, kv)
	}
	return out
}
