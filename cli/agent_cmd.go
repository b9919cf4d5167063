package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/alecthomas/kong"

	"github.com/git-agency/git-agency/agency"
	"github.com/git-agency/git-agency/errs"
	"github.com/git-agency/git-agency/store"
)

// AgentCmd groups `git agency agent …`.
type AgentCmd struct {
	Start  AgentStartCmd  `cmd:"" help:"Start an agent in a new sandbox branched from an integration worktree."`
	Ls     AgentLsCmd     `cmd:"" aliases:"list" help:"List agent invocations."`
	Show   AgentShowCmd   `cmd:"" help:"Show one invocation's record."`
	Send   AgentSendCmd   `cmd:"" help:"Give an agent a follow-up prompt in its own sandbox and conversation (resumes a finished one; types into a running headed one)."`
	Stop   AgentStopCmd   `cmd:"" help:"Stop an agent: SIGINT to its process group; a headed one gets C-c, then its quit command (claude /exit, codex /quit, agency.runner.<name>.quit), then its session is killed. Recorded finished, exit_reason stopped."`
	Kill   AgentKillCmd   `cmd:"" help:"Kill an agent (SIGKILL, or kill its tmux session)."`
	Logs   AgentLogsCmd   `cmd:"" help:"Print an agent's output; --follow streams it until the agent ends."`
	Attach AgentAttachCmd `cmd:"" help:"Attach your terminal to a headed agent's tmux session, waiting for one still starting (detach with the tmux prefix, then d)."`
	Open   AgentOpenCmd   `cmd:"" help:"Open an agent's sandbox in your editor."`
	Path   AgentPathCmd   `cmd:"" help:"Print the absolute path of an agent's sandbox (for cd \"$(git agency agent path ID)\")."`

	Diff    AgentDiffCmd    `cmd:"" help:"Show what an agent changed: its commits and their diff, commits off its branch, then its uncommitted work."`
	Land    AgentLandCmd    `cmd:"" help:"Land an agent's commits (and with --apply its uncommitted work) on its integration worktree. The commits land writes are yours (your identity; signed when commit.gpgsign is set), as with git cherry-pick."`
	Discard AgentDiscardCmd `cmd:"" help:"Throw an agent's sandbox away (a running agent is stopped first; commits on a detached HEAD are kept under refs/agency/kept/; 'git agency undo' brings it back)."`
}

// InvocationArg is the positional invocation id of most agent commands.
type InvocationArg struct {
	Invocation string `arg:"" name:"invocation" help:"Invocation id or unique id prefix."`
}

// AgentStartCmd is `agent start`.
type AgentStartCmd struct {
	Worktree string `short:"w" help:"Integration worktree (name, id or unique id prefix); by default the one you are in (required elsewhere, unless --now)."`
	Now      string `placeholder:"INVOCATION" help:"Start this queued invocation at once, whatever agency.maxActive says (of the other flags only -d and --json apply)."`
	Host     string `placeholder:"NAME" help:"Run the agent on this host (agency.host.<name>.ssh; default agency.worktree.<name>.host, else agency.host.default; 'local' for this machine). Its work comes back as refs and lands here."`
	StartFlags
	JSON bool `name:"json" help:"Print the invocation's record as one JSON object (as agent show --json) instead of its id: at once with -d (or when queued), else when the agent has ended (its output goes to stderr; a headed agent is not attached)."`
}

// AfterApply records --json so errors are printed as JSON too.
func (c *AgentStartCmd) AfterApply(env *Env) error {
	env.JSON = c.JSON
	return nil
}

// StartFlags are agent start's flags after --worktree, shared with `run` so
// the two never drift apart.
type StartFlags struct {
	Runner             string    `help:"Runner: claude, codex, or one configured with agency.runner.<name>.command (default: agency.defaultRunner, else claude)."`
	Headless           bool      `help:"Run without a terminal (subprocess, complete JSONL logs) instead of in tmux. Inside the wall, claude and codex then work without asking (agency.runner.<name>.unattended; docs/wall.md)."`
	Prompt             RawString `xor:"prompt" placeholder:"STRING" help:"The prompt (passed to the runner as one argument, never through a shell)."`
	PromptFile         string    `xor:"prompt" type:"existingfile" help:"Read the prompt from a file."`
	Detached           bool      `short:"d" help:"Return at once instead of following the agent."`
	NoIncludeUntracked bool      `help:"Checkpoints snapshot tracked files only."`
	Full               bool      `help:"Check out every file in the sandbox, even when the integration tree uses sparse-checkout."`
	RunnerArg          RawArgs   `help:"Extra argument for the runner (repeatable), before the prompt (claude and codex get \"--\" in between); taken verbatim, but for {sandbox}, {gitdir} and {commondir}, replaced by the sandbox's work tree, its git directory and the repository's common git directory."`
	Queue              bool      `help:"Over agency.maxActive, queue the start instead of refusing it (also agency.queue): it returns at once and the agent starts when a slot frees."`
}

// RawString is a flag value taken byte for byte: kong's own string
// decoding goes through JSON, which turns bytes that are not UTF-8 into
// U+FFFD. Given tells an empty value (--prompt ”) from no flag.
type RawString struct {
	Text  string
	Given bool
}

// Decode takes the next token as is.
func (r *RawString) Decode(ctx *kong.DecodeContext) error {
	t := ctx.Scan.Pop()
	if t.IsEOL() {
		return fmt.Errorf("missing value")
	}
	r.Text, r.Given = fmt.Sprint(t.Value), true
	return nil
}

func (c *AgentStartCmd) Run(env *Env) error {
	a, err := env.App()
	if err != nil {
		return err
	}

	if c.Now != "" {
		if c.Worktree != "" {
			return errs.NowWithWorktree()
		}

		rec, err := a.StartQueuedNow(env.Ctx, c.Now)
		if err != nil {
			return err
		}

		return c.follow(env, a, rec)
	}

	if c.Worktree == "" {
		// Inside an integration worktree, that one.
		if c.Worktree = a.WorktreeHere(); c.Worktree == "" {
			return errs.StartNeedsWorktree(env.Prog)
		}
	}

	opts := c.options()
	if name := hostOf(a, c.Host, c.Worktree); name != "" {
		return c.startOnHost(env, a, name, opts)
	}

	// Check what can be checked before asking for a prompt.
	wt, _, err := a.PrepareStart(env.Ctx, opts)
	if err != nil {
		return err
	}
	if opts, err = c.withPrompt(env, a, opts); err != nil {
		return err
	}

	// Whether the worktree has edits the agent will not see is a pass over
	// its files: it runs while the sandbox is made.
	unseen := a.CheckUnseenEdits(env.Ctx, wt)
	rec, err := a.StartInvocation(env.Ctx, opts)
	if err != nil {
		unseen.Stop()
		return err
	}

	if unseen.Wait() {
		fmt.Fprintln(env.Stderr, "warning: "+errs.UnseenEditsNote(worktreeNames(a.Store)[rec.IntegrationWorktreeID]))
	}

	return c.started(env, a, rec)
}

// options are the start's options from its flags (without the prompt).
func (c *AgentStartCmd) options() agency.StartOptions {
	opts := agency.StartOptions{
		Worktree: c.Worktree, Runner: c.Runner, Headless: c.Headless,
		RunnerArgs: c.RunnerArg, NoIncludeUntracked: c.NoIncludeUntracked, Full: c.Full, Queue: c.Queue,
	}
	if !c.Headless {
		opts.WindowWidth, opts.WindowHeight = terminalSize()
	}
	return opts
}

// withPrompt reads the prompt (flag, file, or the editor for a headless
// run) into opts; an empty headless prompt is refused.
func (c *AgentStartCmd) withPrompt(env *Env, a *agency.App, opts agency.StartOptions) (agency.StartOptions, error) {
	pr, err := readPrompt(env, a, c.Prompt, c.PromptFile, c.Headless)
	if err != nil {
		return opts, err
	}
	opts.Prompt, opts.PromptSource, opts.PromptPath = pr.text, pr.source, pr.path
	if c.Headless && strings.TrimSpace(opts.Prompt) == "" {
		return opts, errs.New(errs.EPromptEmpty, "write a prompt, or pass --prompt / --prompt-file; nothing was created", "the prompt is empty")
	}
	return opts, nil
}

// started reports a new invocation: its id and queue place when it was
// queued (agency.maxActive), else it follows it.
func (c *AgentStartCmd) started(env *Env, a *agency.App, rec *store.InvocationRecord) error {
	if rec.Status == store.StatusQueued {
		if c.JSON {
			return startJSON(env, a, rec.InvocationID, true, false)
		}

		fmt.Fprintln(env.Stdout, rec.InvocationID)
		place := 0
		if list, err := a.Store.ScanInvocations(); err == nil {
			place = agency.QueuePlaces(list)[rec.InvocationID]
		}

		fmt.Fprintf(env.Stderr, "queued %s: place %d; it starts when a running agent ends (agency.maxActive), or now with '%s agent start --now %s'\n",
			rec.InvocationID, place, env.Prog, store.ShortID(rec.InvocationID))
		return nil
	}

	return c.follow(env, a, rec)
}

// follow prints the id of a started invocation and, unless --detached,
// follows it (headless: its output; headed: tmux attach).
func (c *AgentStartCmd) follow(env *Env, a *agency.App, rec *store.InvocationRecord) error {
	if !c.JSON {
		fmt.Fprintln(env.Stdout, rec.InvocationID)
	}
	if rec.SetupUnapproved != "" {
		fmt.Fprintln(env.Stderr, errs.SetupNotApproved(rec.SetupUnapproved))
	}

	if c.Detached {
		// A followed start shows setup.log, which says it too.
		warnNotIgnored(env, rec.Include)
	}

	if c.JSON {
		return startJSON(env, a, rec.InvocationID, c.Detached, rec.Mode == store.ModeHeaded)
	}
	if c.Detached {
		return nil
	}
	if rec.Mode == store.ModeHeaded {
		return attachHeaded(env, a, rec)
	}

	return followInvocation(env, a, rec.InvocationID, true, true, agency.LogReadable)
}

// startJSON prints a started invocation as one JSON object: at once when
// detached, else once it has ended (its output followed onto stderr, so
// that stdout holds the object alone), exiting with the agent's status.
func startJSON(env *Env, a *agency.App, inv string, detached, headed bool) error {
	var exit error
	if !detached {
		o := agency.FollowOptions{Stdout: env.Stderr, Stderr: env.Stderr, Kind: agency.LogReadable}
		if headed {
			// A headed agent's log is its screen: not for a stream.
			o.Stdout = io.Discard
		}

		if exit = follow(env, a, inv, true, true, o); exit != nil {
			if ee := (*ExitError)(nil); !errors.As(exit, &ee) {
				return exit
			}
		}
	}

	v, err := a.ShowInvocation(env.Ctx, inv)
	if err != nil {
		return err
	}
	if err := printJSON(env.Stdout, newInvocationJSON(a, v, worktreeNames(a.Store)[v.Record.IntegrationWorktreeID])); err != nil {
		return err
	}

	return exit
}

// prompt is a prompt as read for start or send.
type prompt struct{ text, source, path string }

// readPrompt takes the prompt from --prompt, --prompt-file or, when
// editor is set, the user's editor ("" when none of them gives one). An
// empty --prompt is the prompt given, not a reason to open the editor.
func readPrompt(env *Env, a *agency.App, flag RawString, file string, editor bool) (prompt, error) {
	switch {
	case flag.Given:
		if editor && strings.TrimSpace(flag.Text) == "" {
			return prompt{}, errs.PromptFlagEmpty()
		}
		return prompt{flag.Text, "flag", ""}, nil
	case file != "":
		data, err := agency.ReadPromptFile(file)
		if err != nil {
			return prompt{}, err
		}
		abs, _ := filepath.Abs(file)
		return prompt{data, "file", abs}, nil
	case editor:
		p, err := promptFromEditor(env, a)
		if err != nil {
			return prompt{}, err
		}
		return prompt{p, "editor", ""}, nil
	}

	return prompt{}, nil
}

// promptFromEditor opens $EDITOR on a temp file for the prompt.
func promptFromEditor(env *Env, a *agency.App) (string, error) {
	editor, err := a.Editor("")
	if err != nil {
		e := errs.As(err)
		return "", errs.New(errs.EPromptEmpty, "pass --prompt or --prompt-file, or set agency.editor, $VISUAL or $EDITOR", "no prompt given and %s", e.Msg)
	}

	f, err := os.CreateTemp("", "agency-prompt-*.md")
	if err != nil {
		return "", errs.IO("create", "prompt file", err)
	}

	path := f.Name()
	f.Close()
	defer os.Remove(path)
	if err := runEditor(env, editor, path); err != nil {
		return "", err
	}

	return agency.ReadPromptFile(path)
}

// followInvocation prints an invocation's output until it ends (agency's
// Follow), then returns its exit code as an ExitError. Ctrl-C stops the
// agent (twice: kills it). stopOnInterrupt is false for `logs --follow`,
// where Ctrl-C just stops following.
func followInvocation(env *Env, a *agency.App, inv string, stopOnInterrupt, exitWithAgent bool, kind agency.LogKind) error {
	return follow(env, a, inv, stopOnInterrupt, exitWithAgent, agency.FollowOptions{Kind: kind})
}

// follow is followInvocation with the rest of agency's FollowOptions (the
// log offsets a send's turn starts at; streams other than the command's).
func follow(env *Env, a *agency.App, inv string, stopOnInterrupt, exitWithAgent bool, o agency.FollowOptions) error {
	if o.Stdout == nil {
		o.Stdout = env.Stdout
	}
	if o.Stderr == nil {
		o.Stderr = env.Stderr
	}

	if stopOnInterrupt {
		sigs := make(chan os.Signal, 2)
		signal.Notify(sigs, os.Interrupt)
		defer signal.Stop(sigs)
		env.ownInterrupt.Store(true)
		defer env.ownInterrupt.Store(false)
		o.Interrupts = sigs
	}

	rec, err := a.Follow(env.Ctx, inv, o)
	if errors.Is(err, agency.ErrOutputClosed) {
		// `| head -1`: the reader has what it wanted; the agent runs on.
		return nil
	}

	if err != nil {
		if env.Ctx.Err() == nil {
			return err
		}

		// SIGTERM: stop following quietly (the agent runs on under its
		// supervisor). A followed start exits as a process killed by
		// SIGTERM would.
		if exitWithAgent {
			return &ExitError{Code: 128 + int(syscall.SIGTERM)}
		}

		return nil
	}

	if !exitWithAgent {
		return nil
	}

	return agentExit(rec)
}

// Exit statuses of a followed agent that did not exit on its own (as
// timeout(1) and a shell report them).
const (
	ExitAgentTimeout = 124
	ExitAgentStopped = 128 + int(syscall.SIGINT)
	ExitAgentKilled  = 128 + int(syscall.SIGKILL)
)

// agentExit turns a final record into the command's exit status (the
// table in `agent start --help`): 0 only for a run that finished well.
func agentExit(rec *store.InvocationRecord) error {
	switch store.Deref(rec.ExitReason) {
	case store.ExitTimeout:
		return &ExitError{Code: ExitAgentTimeout}
	case store.ExitStopped:
		return &ExitError{Code: ExitAgentStopped}
	case store.ExitKilled:
		return &ExitError{Code: ExitAgentKilled}
	}

	if rec.ExitCode != nil && *rec.ExitCode > 0 && *rec.ExitCode < 256 {
		return &ExitError{Code: *rec.ExitCode}
	}
	if rec.Status == store.StatusFailed || (rec.ExitCode != nil && *rec.ExitCode != 0) {
		return &ExitError{Code: 1}
	}

	return nil
}

// AgentStopCmd is `agent stop`.
type AgentStopCmd struct {
	InvocationArg
	Wait time.Duration `default:"10s" help:"How long to wait for the agent to end; still running then is an error (exit 1)."`
}

func (c *AgentStopCmd) Run(env *Env) error { return stopCmd(env, c.Invocation, false, c.Wait) }

// AgentKillCmd is `agent kill`.
type AgentKillCmd struct {
	InvocationArg
}

func (c *AgentKillCmd) Run(env *Env) error { return stopCmd(env, c.Invocation, true, 10*time.Second) }

func stopCmd(env *Env, inv string, kill bool, wait time.Duration) error {
	a, err := env.App()
	if err != nil {
		return err
	}
	if r, err := a.ResolveInvocation(inv); err == nil && r.Host != "" {
		return onHost(env, a, r, map[bool]string{false: "stop", true: "kill"}[kill], r.InvocationID)
	}

	rec, err := a.StopInvocation(env.Ctx, inv, kill, wait)
	if err != nil {
		return err
	}
	if rec.Active() {
		return errs.StopGaveUp(rec.InvocationID, map[bool]string{false: "stop", true: "kill"}[kill], wait.String())
	}

	fmt.Fprintf(env.Stdout, "%s: %s (%s)\n", rec.InvocationID, rec.Status, store.Deref(rec.ExitReason))
	return nil
}

// AgentLogsCmd is `agent logs`.
type AgentLogsCmd struct {
	InvocationArg
	Follow bool `short:"f" help:"Keep printing new output until the agent ends (a headed agent's pane is drawn without the sequences your terminal would answer or keep)."`
	Raw    bool `xor:"which" help:"Print the runner's own output (logs/raw.jsonl; a headed agent's pane.log, terminal escapes and all) instead of the normalised events (a headed agent's screen as text)."`
	Stderr bool `xor:"which" help:"Print the runner's stderr (logs/stderr.log) instead."`
	Verify bool `xor:"which" help:"Print the log of the latest verify (agency.verify run on the candidate a land would make)."`
}

func (c *AgentLogsCmd) Run(env *Env) error {
	a, err := env.App()
	if err != nil {
		return err
	}

	rec, err := a.ResolveInvocation(c.Invocation)
	if err != nil {
		return err
	}
	if c.Verify {
		return printVerifyLog(env, a, rec)
	}
	if rec.Host != "" {
		return forward(env, a, rec, c.Follow, append([]string{"agent"}, c.hostArgs(rec.InvocationID)...)...)
	}

	// By default the normalised stream as readable lines; without one (a
	// custom runner, a headed run) the runner's own output.
	kind := agency.LogReadable
	switch {
	case c.Stderr:
		kind = agency.LogStderr
	case c.Raw:
		kind = agency.LogRaw
	}

	if c.Follow && !c.Stderr {
		return followInvocation(env, a, rec.InvocationID, false, false, kind)
	}

	if rec.Mode == store.ModeHeaded && kind == agency.LogReadable {
		// Its screen as text, terminal or not: pane.log's bytes hold
		// queries the terminal would answer into the shell (--raw).
		a.CopyScreen(env.Ctx, rec, env.Stdout)
		return nil
	}

	a.CopyLogs(rec, kind, env.Stdout, env.Stderr)
	return nil
}

// AgentOpenCmd is `agent open`.
type AgentOpenCmd struct {
	InvocationArg
	Editor string `help:"Editor command (default: agency.editor, $VISUAL, $EDITOR)."`
}

func (c *AgentOpenCmd) Run(env *Env) error {
	a, err := env.App()
	if err != nil {
		return err
	}

	rec, err := a.ResolveInvocation(c.Invocation)
	if err != nil {
		return err
	}
	if _, err := os.Stat(rec.SandboxPath); err != nil {
		return errs.New(errs.ENotFound, "its sandbox was removed when it was landed or discarded", "invocation %s has no sandbox tree", rec.InvocationID)
	}

	editor, err := a.Editor(c.Editor)
	if err != nil {
		return err
	}

	return runEditor(env, editor, rec.SandboxPath)
}

// SuperviseCmd is the hidden `supervise <inv>`: the supervisor process that
// `agent start` spawns. Not for people.
type SuperviseCmd struct {
	// WallReport: descriptor 3 is the pipe the start waits on to learn
	// whether the agent's wall came up (runner.WallReportFlag).
	WallReport bool   `name:"wall-report" hidden:""`
	Invocation string `arg:""`
}

func (c *SuperviseCmd) Run(env *Env) error {
	var report *os.File
	if c.WallReport {
		// Not for the processes it starts: the start would wait on them.
		syscall.CloseOnExec(3)
		report = os.NewFile(3, "wall-report")
	}

	a, err := env.App()
	if err != nil {
		return err
	}
	return a.Supervise(env.Ctx, c.Invocation, env.Stderr, report)
}

func (*SuperviseCmd) longLived() {}

// AgentPathCmd is `agent path`.
type AgentPathCmd struct {
	InvocationArg
}

func (c *AgentPathCmd) Run(env *Env) error {
	a, err := env.App()
	if err != nil {
		return err
	}
	p, err := a.SandboxPath(c.Invocation)
	if err != nil {
		return err
	}
	fmt.Fprintln(env.Stdout, p)
	return nil
}
