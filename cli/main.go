// Package cli holds the kong grammars of git-agency and git-sandbox, their
// help text, human and --json output, and the mapping of errors to exit
// statuses. It never touches git or the disk itself: it calls agency.
package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"reflect"
	"runtime/debug"
	"strings"
	"sync/atomic"
	"syscall"

	"github.com/alecthomas/kong"
	"github.com/mattn/go-isatty"

	"github.com/git-agency/git-agency/agency"
	"github.com/git-agency/git-agency/errs"
	"github.com/git-agency/git-agency/gitcore"
)

// Version is set at build time with -ldflags "-X …/cli.Version=…" (make
// build). Left empty, the binary's build info says: see version.
var Version string

// Env is what every command gets: streams, the working directory, and the
// repository opened on first use. Bound into kong by type.
type Env struct {
	Ctx    context.Context
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	Dir    string
	// StdoutTTY, StdinTTY and StderrTTY tell whether those streams are
	// terminals.
	StdoutTTY bool
	StdinTTY  bool
	StderrTTY bool
	// JSON is set by commands run with --json: errors are printed as JSON.
	JSON bool
	// Runner is the git runner (tests may inject one).
	Runner gitcore.CommandRunner
	// Prog is the program name as the user typed it ("git agency").
	Prog string

	app *agency.App
	// oneShotGC: Main tunes the collector for one-shot commands (tests
	// that call Run in-process leave it alone).
	oneShotGC bool
	// ownInterrupt is set while a command handles Ctrl-C itself (following
	// an agent: Ctrl-C stops the agent); otherwise Ctrl-C ends Ctx.
	ownInterrupt atomic.Bool
}

// App opens the repository containing the working directory (once).
func (e *Env) App() (*agency.App, error) {
	if e.app != nil {
		return e.app, nil
	}

	a, err := agency.Open(e.Ctx, e.Dir, e.Runner)
	if err != nil {
		return nil, err
	}

	if r := a.Relinked; r != nil && r.Err == nil {
		fmt.Fprintf(e.Stderr, "note: this repository moved from %s; its records were relinked and %d worktree(s) repaired\n", r.From, len(r.Repaired))
	} else if r != nil {
		fmt.Fprintf(e.Stderr, "warning: this repository moved from %s and relinking its records failed: %v ('git agency doctor' retries)\n", r.From, errs.As(r.Err).Msg)
	}

	// What goes wrong without failing the command is said, not dropped.
	a.Warn = func(err error) { fmt.Fprintf(e.Stderr, "warning: %s\n", errs.As(err).Msg) }
	a.DetachRemovals = true
	e.app = a
	return a, nil
}

// Color reports whether colour may be used on stdout.
func (e *Env) Color() bool {
	return e.StdoutTTY && !e.JSON && os.Getenv("NO_COLOR") == "" && os.Getenv("TERM") != "dumb"
}

// MainAgency runs `git agency` with args (without the program name). The
// hidden entry points (hook-event, wall-exec, remove-retired) are not
// here: the program registers them first (internal/entry.Main).
func MainAgency(args []string) int {
	return Main("git agency", &AgencyCLI{}, args)
}

// MainSandbox runs `git sandbox` with args (without the program name).
func MainSandbox(args []string) int {
	return Main("git sandbox", &SandboxCLI{}, args)
}

// Main parses args against grammar and runs the selected command, printing
// errors as `error: E_CODE: message` and `hint: …`. It returns the exit
// status: 0 ok, 1 error, 2 usage.
func Main(prog string, grammar any, args []string) int {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	ctx, interrupt := context.WithCancel(ctx)
	defer interrupt()
	dir, err := os.Getwd()
	if err != nil {
		fmt.Fprintf(os.Stderr, "error: %s: cannot read the current directory: %v\n", errs.EIO, err)
		return 1
	}

	env := &Env{
		Ctx: ctx, Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Dir: dir,
		StdoutTTY: isatty.IsTerminal(os.Stdout.Fd()),
		StdinTTY:  isatty.IsTerminal(os.Stdin.Fd()),
		StderrTTY: isatty.IsTerminal(os.Stderr.Fd()),
		Prog:      prog,
		oneShotGC: true,
	}
	defer cancelOnInterrupt(env, interrupt)()
	return Run(env, grammar, args)
}

// cancelOnInterrupt makes Ctrl-C (SIGINT) end env.Ctx, so a command waiting
// for the repository lock, or for git, stops and cleans up instead of
// dying half-way; a second Ctrl-C exits at once (130). While a command
// handles Ctrl-C itself (env.ownInterrupt) the signal is left to it. It
// returns the function that stops listening.
func cancelOnInterrupt(env *Env, cancel context.CancelFunc) func() {
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-done:
				return
			case <-sigs:
			}

			if env.ownInterrupt.Load() {
				continue
			}
			if env.Ctx.Err() != nil {
				os.Exit(128 + int(syscall.SIGINT))
			}

			cancel()
		}
	}()
	return func() { signal.Stop(sigs); close(done) }
}

type exitCode int

// Run is Main with an explicit environment (tests use it).
func Run(env *Env, grammar any, args []string) (code int) {
	if _, ok := grammar.(*AgencyCLI); ok {
		if code, ok := serveStatusFast(env, args); ok {
			return code
		}
	}

	exited := false
	parser, err := newParser(env, grammar, &exited)
	if err != nil {
		fmt.Fprintf(env.Stderr, "error: %s: %v\n", errs.EInternal, err)
		return 1
	}
	defer func() {
		if r := recover(); r != nil {
			if c, ok := r.(exitCode); ok && exited {
				code = int(c)
				return
			}
			panic(r)
		}
	}()

	if len(args) == 0 && len(parser.Model.Children) > 0 {
		// A program of subcommands run with none, as `git worktree`: the
		// usage summary on stderr, and the usage exit status.
		parser.Stdout = env.Stderr
		if kctx, err := kong.Trace(parser, nil); err == nil {
			kctx.PrintUsage(true)
		}
		return 2
	}

	kctx, err := parser.Parse(args)
	if err != nil {
		// --json asks for JSON errors even when the line does not parse.
		env.JSON = env.JSON || wantsJSON(args)
		if coded := (*errs.Error)(nil); errors.As(err, &coded) {
			// A flag's own check (--repo's directory) said what is wrong.
			return printError(env, coded)
		}
		return printError(env, usageError(env.Prog, err))
	}

	tuneGC(env, kctx)

	if err := kctx.Run(); err != nil {
		return printError(env, err)
	}

	return 0
}

// newParser is kong's parser of grammar for env; a kong exit sets *exited
// and panics with its status, which Run recovers.
func newParser(env *Env, grammar any, exited *bool) (*kong.Kong, error) {
	return kong.New(grammar,
		kong.Name(env.Prog),
		kong.Description(description(env.Prog)),
		kong.Writers(env.Stdout, env.Stderr),
		kong.Exit(func(c int) { *exited = true; panic(exitCode(c)) }),
		kong.Bind(env),
		// A flag's value may start with '-' (--runner-arg --verbose), as
		// with git's own options.
		kong.WithHyphenPrefixedParameters(true),
		// …but a flag at the end of the line has no value: an error, not
		// "" (which would pick the default runner, or every worktree).
		kong.KindMapper(reflect.String, kong.MapperFunc(func(ctx *kong.DecodeContext, target reflect.Value) error {
			if ctx.Scan.Peek().IsEOL() {
				return fmt.Errorf("missing value")
			}
			return ctx.Scan.PopValueInto("string", target.Addr().Interface())
		})),
		kong.Vars{"version": strings.ReplaceAll(env.Prog, " ", "-") + " version " + version()},
		kong.ConfigureHelp(kong.HelpOptions{Compact: true, Summary: true, WrapUpperBound: 100}),
		kong.Help(helpPrinter(env.Prog)),
	)
}

// tuneGC lightens the collector for a one-shot command run from Main: its
// heap is small and dies with it, and collecting it as it grows (ls of a
// thousand records) is most of the extra cost. Long-lived processes keep
// the default (the supervisor's memory is bounded, watch's too).
func tuneGC(env *Env, kctx *kong.Context) {
	if env.oneShotGC && !longLived(kctx) {
		debug.SetGCPercent(oneShotGCPercent)
	}
}

// oneShotGCPercent is GOGC for one-shot commands run from Main.
const oneShotGCPercent = 400

// longLivedCmd is implemented by the commands whose process lives as long
// as an agent or a terminal view does.
type longLivedCmd interface{ longLived() }

// longLived tells whether the parsed command is long-lived (a grammar
// without subcommands, as watch's, counts as one).
func longLived(kctx *kong.Context) bool {
	sel := kctx.Selected()
	if sel == nil || !sel.Target.CanAddr() {
		return true
	}
	_, ok := sel.Target.Addr().Interface().(longLivedCmd)
	return ok
}

// wantsJSON reports whether a command line that did not parse asked for
// --json (before any "--").
func wantsJSON(args []string) bool {
	for _, a := range args {
		switch a {
		case "--":
			return false
		case "--json", "--json=true":
			return true
		}
	}
	return false
}

func description(prog string) string {
	if prog == "git sandbox" {
		return "The sandbox-centric front door of git-agency: every command takes an invocation id " +
			"(or a unique prefix) and acts on that agent's sandbox. 'git sandbox land <id>' is " +
			"'git agency agent land <id>'."
	}
	return "Run many coding agents at once on one repository, each in its own sandbox worktree, " +
		"and land their work on human-owned integration worktrees."
}

// usageError is the E_USAGE of a command line kong rejected. An id given
// as the one argument of a command that takes it as -i and no argument
// (checkpoint ls 7f3a, as the agent commands would take it) gets the
// corrected command as its hint.
func usageError(prog string, err error) *errs.Error {
	var cmd *kong.Node
	var pe *kong.ParseError
	if errors.As(err, &pe) && pe.Context != nil {
		cmd = pe.Context.Selected()
	}

	// The help to read: the command's own names, without aliases ("agent
	// ls"), or the program's.
	help := prog
	if cmd != nil {
		var names []string
		for n := cmd; n != nil && n.Type == kong.CommandNode; n = n.Parent {
			names = append([]string{n.Name}, names...)
		}
		help = prog + " " + strings.Join(names, " ")
	}

	// An id as the argument of a command that takes none but -i.
	if arg, ok := strings.CutPrefix(err.Error(), "unexpected argument "); ok && cmd != nil && len(cmd.Positional) == 0 && !strings.HasPrefix(arg, "-") {
		for _, f := range cmd.Flags {
			if f.Name == "invocation" && f.Short == 'i' {
				return errs.UsageInvocationFlag(err.Error(), help, arg)
			}
		}
	}

	return errs.Usage(err.Error(), help)
}

// ExitError carries a command's chosen exit status without printing (an
// agent's exit code, say).
type ExitError struct{ Code int }

func (e *ExitError) Error() string { return fmt.Sprintf("exit status %d", e.Code) }

// printError prints err in the house format and returns the exit status.
func printError(env *Env, err error) int {
	var ex *ExitError
	if errors.As(err, &ex) {
		return ex.Code
	}

	var ge *gitcore.GitError
	var e *errs.Error
	if !errors.As(err, &e) && errors.As(err, &ge) {
		e = errs.Git(ge.Args, ge.ExitCode, ge.Stderr)
	}
	if e == nil {
		e = errs.As(err)
	}

	if e.Hint == "" {
		// What to do about the code in general, when the error has no
		// more particular advice (docs/errors.md says the same).
		c := *e
		c.Hint = errs.Fix[e.Code]
		e = &c
	}

	if env.JSON {
		if e.Detail == nil {
			e.Detail = []string{}
		}

		obj := map[string]any{"error": map[string]any{
			"code": string(e.Code), "message": e.Msg, "hint": e.Hint, "detail": e.Detail,
		}}
		data, _ := json.Marshal(obj)
		fmt.Fprintln(env.Stderr, string(data))
	} else {
		fmt.Fprintf(env.Stderr, "error: %s: %s\n", e.Code, e.Msg)
		for _, d := range e.Detail {
			fmt.Fprintf(env.Stderr, "  %s\n", d)
		}
		if e.Hint != "" {
			fmt.Fprintf(env.Stderr, "hint: %s\n", e.Hint)
		}
	}

	if e.Exit != 0 {
		return e.Exit
	}
	if e.Code == errs.EUsage {
		return 2
	}

	return 1
}

// JSONFlag is embedded by every read command.
type JSONFlag struct {
	JSON bool `name:"json" help:"Print machine-readable JSON (records use their meta.json field names)."`
}

// AfterApply records --json so errors are printed as JSON too.
func (j *JSONFlag) AfterApply(env *Env) error {
	env.JSON = j.JSON
	return nil
}

// RawArgs is a repeatable flag whose values are taken verbatim, even when
// they start with '-' or hold commas (--runner-arg --model=x,y).
type RawArgs []string

// Decode appends the next token as is.
func (r *RawArgs) Decode(ctx *kong.DecodeContext) error {
	t := ctx.Scan.Pop()
	if t.IsEOL() {
		return fmt.Errorf("missing value")
	}
	*r = append(*r, fmt.Sprint(t.Value))
	return nil
}
