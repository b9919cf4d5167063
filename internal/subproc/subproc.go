// Package subproc is what every child process of git-agency shares: the
// scrubbed environment it starts with and the AGENCY_TRACE=1 trace line it
// leaves on stderr. gitcore's and runner/tmux's runners and runner's agent,
// setup and supervisor starts go through it. Terminal is the one way cli
// and watch hand the user's terminal to a program (an editor, a shell, a
// pager, tmux attach, the watch program); they never use os/exec
// themselves (internal/houserules checks it). It imports nothing of ours.
package subproc

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// repoVars is `git rev-parse --local-env-vars` (git 2.39): the variables git
// exports to extensions and hooks that pin a child git to one repository.
// GIT_CONFIG_PARAMETERS and GIT_CONFIG_COUNT (from `git -c k=v agency`) are
// not among them and are kept.
var repoVars = map[string]bool{
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

// IsRepoVar reports whether k is one of git's repository-pinning variables.
func IsRepoVar(k string) bool { return repoVars[k] }

// Scrub returns env without git's repository-pinning variables (a child
// acts on the tree it is started in, never on the repository git pointed us
// at), without GIT_EXEC_PATH (git's own, for its subcommands), without TMUX
// and TMUX_PANE (so no tmux client picks the server we were started from
// instead of the default one) and without the keys in drop. extra entries
// are appended last (and so win). env is not modified.
func Scrub(env []string, drop []string, extra ...string) []string {
	out := without(env, len(extra), func(k string) bool {
		return repoVars[k] || k == "GIT_EXEC_PATH" || k == "TMUX" || k == "TMUX_PANE" || contains(drop, k)
	})
	return append(out, extra...)
}

// ScrubRepo is the environment of a program the user drives in a tree of
// ours (an editor, a shell): without git's repository-pinning variables and
// GIT_EXEC_PATH, so git in it acts on the tree it runs in, but with
// everything else, TMUX included, so it behaves as in the user's terminal.
// env is not modified.
func ScrubRepo(env []string) []string {
	return without(env, 0, func(k string) bool { return repoVars[k] || k == "GIT_EXEC_PATH" })
}

// without is env without the variables whose name drop says, with room
// for spare more.
func without(env []string, spare int, drop func(name string) bool) []string {
	out := make([]string, 0, len(env)+spare)
	for _, kv := range env {
		if k, _, _ := strings.Cut(kv, "="); !drop(k) {
			out = append(out, kv)
		}
	}
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// TraceVar turns tracing on when set to 1.
const TraceVar = "AGENCY_TRACE"

// Tracing reports whether AGENCY_TRACE=1.
func Tracing() bool { return os.Getenv(TraceVar) == "1" }

// Trace notes that cmd starts now; the returned function, called once cmd
// has finished, prints `agency-trace: <seconds>s <argv>` on stderr when
// AGENCY_TRACE=1 (and does nothing otherwise).
func Trace(cmd *exec.Cmd) (done func()) {
	return TraceTo(os.Stderr, Tracing(), cmd.Args)
}

// TraceTo is Trace for argv, printing to w when on.
func TraceTo(w io.Writer, on bool, argv []string) (done func()) {
	if !on {
		return func() {}
	}
	start := time.Now()
	return func() {
		fmt.Fprintf(w, "agency-trace: %.3fs %s\n", time.Since(start).Seconds(), FormatArgv(argv))
	}
}

// Run runs cmd, traced.
func Run(cmd *exec.Cmd) error {
	done := Trace(cmd)
	err := cmd.Run()
	done()
	return err
}

// FormatArgv renders argv for a trace line: the program's base name, then
// the arguments, each quoted as a shell would need it ('…'), or Go-quoted
// ("…") when it holds control characters, so a line is always one line.
func FormatArgv(argv []string) string {
	parts := make([]string, len(argv))
	for i, a := range argv {
		if i == 0 {
			a = filepath.Base(a)
		}
		parts[i] = quote(a)
	}
	return strings.Join(parts, " ")
}

func quote(a string) string {
	if strings.ContainsFunc(a, func(r rune) bool { return r < ' ' || r == 0x7f }) {
		return strconv.Quote(a)
	}
	if a != "" && !strings.ContainsFunc(a, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./=:,+@%^", r) || r > 0x7f)
	}) {
		return a
	}
	return "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
}
