// Package runner starts and supervises agents: the runner catalogue
// (claude, codex, custom runners from git config), the invocation
// supervisor, headless and tmux modes, log capture, the checkpointer and
// the stream parser. It may use gitcore and store; it never resolves names
// or prints.
package runner

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/git-agency/git-agency/errs"
	"github.com/git-agency/git-agency/gitcore"
	"github.com/git-agency/git-agency/internal/subproc"
	"github.com/git-agency/git-agency/wall"
)

// Spec is one runner: its program and arguments per mode.
type Spec struct {
	Name         string
	Program      string
	Args         []string // both modes, after the built-in's own
	HeadlessArgs []string
	HeadedArgs   []string
	// Timeout bounds the whole run (0 = none); IdleTimeout bounds a stretch
	// without output (0 = none).
	Timeout     time.Duration
	IdleTimeout time.Duration
	// Format is the stdout stream format ("claude", "codex", "" = unknown).
	Format string
	// ResumeArgs continue a conversation (agent send): added after the
	// other arguments, before the prompt, with "{session_id}" replaced.
	// Empty: the runner cannot be resumed.
	ResumeArgs []string
	// ResumeLastArgs continue the latest conversation in the working
	// directory, for a run whose id never came out (a headed codex prints
	// its thread id only when it quits). Each sandbox is its invocation's
	// own, so its latest conversation is the invocation's. Empty: none.
	ResumeLastArgs []string
	// SessionArgs start a conversation under an id chosen up front
	// ("{session_id}"), so it is known before the runner prints anything.
	SessionArgs []string
	// Hooks is the hook flavour injected into a run: "claude" (the
	// built-in claude's default; `--settings` with hooks that report its
	// state) or "" (none).
	Hooks string
	// EndOfOptions puts "--" before the prompt, so that a runner argument
	// that takes a value (--allowedTools Bash) can never swallow it. Set
	// for the built-ins, whose parsers take "--"; a custom runner's may not.
	EndOfOptions bool
	// Quit is what ends the runner's interactive session when typed at its
	// prompt (claude: /exit, codex: /quit; agency.runner.<name>.quit): a
	// headed stop types it when C-c ended only the turn. "": none.
	Quit string
	// UnattendedArgs let the runner work alone inside the wall: run shell
	// commands, edit files and commit in its sandbox without asking, and
	// without a sandbox of its own (codex's cannot commit in a worktree,
	// whose git data lives outside it). Added only by Walled.
	UnattendedArgs []string
	// AttendedArgs are what a headed run inside the wall gets instead,
	// when it still asks: codex without its own sandbox, which cannot run
	// inside the wall (every edit would fail and ask to retry without it),
	// its approvals as they are.
	AttendedArgs []string
	// PermissionFlags are the runner's own flags that pick how it asks or
	// how it sandboxes itself: a user who passes one has chosen, and no
	// UnattendedArgs are added. SandboxFlags are those that pick its own
	// sandbox: with one, no AttendedArgs are added.
	PermissionFlags, SandboxFlags []string
	// Unattended is agency.runner.<name>.unattended: "" (unset: headless
	// runs inside the wall work alone, headed runs ask), "true" (headed
	// runs too) or "false" (the runner asks as it would on its own).
	Unattended string
	// walled holds the arguments Walled chose, which Argv adds.
	walled []string
}

// builtins are the runners that need no configuration.
var builtins = map[string]Spec{
	"claude": {Name: "claude", Program: "claude",
		HeadlessArgs: []string{"-p", "--output-format", "stream-json", "--verbose"}, Format: "claude", Hooks: "claude", EndOfOptions: true, Quit: "/exit",
		ResumeArgs:      []string{"--resume", "{session_id}"},
		SessionArgs:     []string{"--session-id", "{session_id}"},
		UnattendedArgs:  []string{"--permission-mode", "bypassPermissions"},
		PermissionFlags: []string{"--permission-mode", "--dangerously-skip-permissions", "--allow-dangerously-skip-permissions"}},
	// codex takes `resume <id>` after exec's options (headless) or as its
	// own subcommand (headed); either way after the other arguments.
	"codex": {Name: "codex", Program: "codex",
		HeadlessArgs: []string{"exec", "-C", "{sandbox}", "--json"}, Format: "codex", EndOfOptions: true, Quit: "/quit",
		ResumeArgs: []string{"resume", "{session_id}"}, ResumeLastArgs: []string{"resume", "--last"},
		UnattendedArgs:  []string{"--dangerously-bypass-approvals-and-sandbox"},
		AttendedArgs:    []string{"--sandbox", "danger-full-access"},
		PermissionFlags: []string{"--dangerously-bypass-approvals-and-sandbox", "--sandbox", "-s", "--ask-for-approval", "-a", "--approve-for-me"},
		SandboxFlags:    []string{"--dangerously-bypass-approvals-and-sandbox", "--sandbox", "-s"}},
}

// DefaultRunner is used when neither --runner nor agency.defaultRunner is set.
const DefaultRunner = "claude"

// Lookup builds the Spec of runner name from the built-ins and git config:
// agency.runner.<name>.command overrides the program; .arg (both modes),
// .headlessArg and .headedArg (per mode) are multi-valued and added after
// the built-in's own arguments; .timeout (or agency.timeout) and
// agency.idleTimeout bound the run; .format names the stream format.
func Lookup(cfg *gitcore.Config, name string) (Spec, error) {
	if name == "" {
		name = DefaultRunner
		if v, ok := cfg.Get("agency.defaultRunner"); ok && v != "" {
			name = v
		}
	}

	spec, builtin := builtins[name]
	spec.Name = name
	spec.Args = append([]string(nil), spec.Args...)
	spec.HeadlessArgs = append([]string(nil), spec.HeadlessArgs...)
	spec.HeadedArgs = append([]string(nil), spec.HeadedArgs...)
	key := "agency.runner." + name + "."
	if _, ok := cfg.Get(key + "unattended"); ok {
		on, valid := cfg.Bool(key+"unattended", false)
		if !valid {
			v, _ := cfg.Get(key + "unattended")
			return Spec{}, errs.Config(key+"unattended", v, "true or false")
		}
		spec.Unattended = strconv.FormatBool(on)
	}

	if v, ok := cfg.Get(key + "command"); ok && v != "" {
		spec.Program = v
	}
	if spec.Program == "" {
		if !builtin {
			return Spec{}, errs.UnknownRunner(name, usableNames(cfg))
		}
	}

	spec.Args = append(spec.Args, cfg.GetAll(key+"arg")...)
	spec.HeadlessArgs = append(spec.HeadlessArgs, cfg.GetAll(key+"headlessArg")...)
	spec.HeadedArgs = append(spec.HeadedArgs, cfg.GetAll(key+"headedArg")...)
	if v, ok := cfg.Get(key + "quit"); ok {
		spec.Quit = v
	}
	if v, ok := cfg.Get(key + "format"); ok {
		spec.Format = v
	}
	if v, ok := cfg.Get(key + "hooks"); ok {
		switch v {
		case "claude", "none", "":
			spec.Hooks = strings.TrimPrefix(v, "none")
		default:
			return Spec{}, errs.Config(key+"hooks", v, "claude or none")
		}
	}

	spec.ResumeArgs = append([]string(nil), spec.ResumeArgs...)
	if v := cfg.GetAll(key + "resumeArg"); len(v) > 0 {
		spec.ResumeArgs = v
		spec.SessionArgs, spec.ResumeLastArgs = nil, nil
	}

	spec.ResumeLastArgs = append([]string(nil), spec.ResumeLastArgs...)
	var ok bool
	if spec.Timeout, ok = cfg.Duration(key+"timeout", 0); !ok {
		v, _ := cfg.Get(key + "timeout")
		return Spec{}, errs.Config(key+"timeout", v, "a duration such as 30m")
	}

	if spec.Timeout == 0 {
		if spec.Timeout, ok = cfg.Duration("agency.timeout", 0); !ok {
			v, _ := cfg.Get("agency.timeout")
			return Spec{}, errs.Config("agency.timeout", v, "a duration such as 30m")
		}
	}

	if spec.IdleTimeout, ok = cfg.Duration(key+"idleTimeout", 0); !ok {
		v, _ := cfg.Get(key + "idleTimeout")
		return Spec{}, errs.Config(key+"idleTimeout", v, "a duration such as 5m")
	}

	if spec.IdleTimeout == 0 {
		if spec.IdleTimeout, ok = cfg.Duration("agency.idleTimeout", 0); !ok {
			v, _ := cfg.Get("agency.idleTimeout")
			return Spec{}, errs.Config("agency.idleTimeout", v, "a duration such as 5m")
		}
	}

	return spec, nil
}

// Names lists the built-in and configured runners.
func Names(cfg *gitcore.Config) []string {
	names := []string{"claude", "codex"}
	for _, n := range cfg.Subsections("agency.runner") {
		if n != "claude" && n != "codex" {
			names = append(names, n)
		}
	}
	return names
}

// usableNames are the runners a start can use: the built-ins and those
// configured with a command.
func usableNames(cfg *gitcore.Config) []string {
	var out []string
	for _, n := range Names(cfg) {
		if v, ok := cfg.Get("agency.runner." + n + ".command"); n == "claude" || n == "codex" || ok && v != "" {
			out = append(out, n)
		}
	}
	return out
}

// Paths are the directories a runner argument can name: "{sandbox}" (the
// sandbox's work tree), "{gitdir}" (its worktree git directory,
// <commondir>/worktrees/<name>) and "{commondir}" (the repository's common
// git directory), so that a runner that starts a container can mount what
// git needs there.
type Paths struct {
	Sandbox, GitDir, CommonDir string
}

// expand replaces the placeholders of Paths in a.
func (p Paths) expand(a string) string {
	if !strings.Contains(a, "{") {
		return a
	}
	return strings.NewReplacer("{sandbox}", p.Sandbox, "{gitdir}", p.GitDir, "{commondir}", p.CommonDir).Replace(a)
}

// Argv is the runner's command line for a mode: program, the built-in's
// arguments, its unattended ones when Walled chose them, the configured
// arguments, the user's --runner-args, then the prompt as one last argument
// (omitted when empty), after "--" for the built-ins. The placeholders of
// Paths are replaced. Nothing goes through a shell.
func (s Spec) Argv(headless bool, runnerArgs []string, prompt string, paths Paths) []string {
	argv := []string{s.Program}
	mode := s.HeadedArgs
	if headless {
		mode = s.HeadlessArgs
	}

	for _, a := range append(append(append(append([]string(nil), mode...), s.walled...), s.Args...), runnerArgs...) {
		argv = append(argv, paths.expand(a))
	}

	if prompt != "" {
		if s.EndOfOptions {
			argv = append(argv, "--")
		}
		argv = append(argv, prompt)
	}

	return argv
}

// Walled returns s as it runs inside the wall. There a built-in works alone
// (its UnattendedArgs) when it runs headless, or headed with
// agency.runner.<name>.unattended true, unless the configured or the
// user's arguments name one of its PermissionFlags; a headed run that still
// asks gets its AttendedArgs, unless they name one of its SandboxFlags.
// Nothing is added with unattended false, nor outside the wall.
func (s Spec) Walled(walled, headless bool, runnerArgs []string) Spec {
	s.walled = nil
	if !walled || s.Unattended == "false" {
		return s
	}

	mode := s.HeadedArgs
	if headless {
		mode = s.HeadlessArgs
	}

	args := append(append(append([]string(nil), mode...), s.Args...), runnerArgs...)
	if headless || s.Unattended == "true" {
		if !names(args, s.PermissionFlags) {
			s.walled = s.UnattendedArgs
		}
	} else if !names(args, s.SandboxFlags) {
		s.walled = s.AttendedArgs
	}

	return s
}

// names reports whether args hold one of flags (alone or as flag=value).
func names(args, flags []string) bool {
	for _, a := range args {
		for _, f := range flags {
			if a == f || strings.HasPrefix(a, f+"=") {
				return true
			}
		}
	}
	return false
}

// Find resolves the runner's program on PATH (or as a path).
func (s Spec) Find() (string, error) {
	p, err := exec.LookPath(s.Program)
	if err != nil {
		return "", errs.New(errs.ERunnerNotFound,
			"install it, put it on PATH, or point git config agency.runner."+s.Name+".command at it",
			"runner %q: program %q not found", s.Name, s.Program)
	}
	return p, nil
}

// versionWait bounds `<program> --version` (a node CLI on a loaded
// machine, inside a wall, takes seconds).
const versionWait = 10 * time.Second

// Version runs `<program> --version` at path (what Find returned) as runner
// runs every child (scrubbed environment, traced, stdin from /dev/null),
// bounded in time, and returns the first line of its output, or "" when
// the program fails, says nothing or does not answer in time.
func (s Spec) Version(ctx context.Context, path string) string {
	return versionOf(ctx, []string{path, "--version"})
}

// VersionInside is Version with the program run inside the wall w.
func (s Spec) VersionInside(ctx context.Context, path string, w *wall.Wall) string {
	return versionOf(ctx, w.Command([]string{path, "--version"}))
}

// versionOf is the first line argv prints (bounded in time), "" when it
// fails.
func versionOf(ctx context.Context, argv []string) string {
	ctx, cancel := context.WithTimeout(ctx, versionWait)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = subproc.Scrub(os.Environ(), nil)

	// A program that leaves a child holding stdout must not hold us.
	cmd.WaitDelay = time.Second
	done := subproc.Trace(cmd)
	b, err := cmd.Output()
	done()
	line, _, _ := strings.Cut(strings.TrimSpace(string(b)), "\n")
	if err != nil {
		return ""
	}

	return strings.TrimSpace(line)
}

// sessionFlags are the claude flags that already pick a conversation: with
// one of them among the arguments, no session id is chosen up front.
var sessionFlags = []string{"--session-id", "--resume", "-r", "--continue", "-c", "--fork-session"}

// StartArgs are the arguments that start a conversation under sessionID
// (none when the runner takes no such argument, or the user's arguments
// already pick a conversation).
func (s Spec) StartArgs(runnerArgs []string, sessionID string) []string {
	if len(s.SessionArgs) == 0 || sessionID == "" {
		return nil
	}
	for _, a := range append(append(append(append([]string(nil), s.Args...), s.HeadlessArgs...), s.HeadedArgs...), runnerArgs...) {
		for _, f := range sessionFlags {
			if a == f || strings.HasPrefix(a, f+"=") {
				return nil
			}
		}
	}
	return withSession(s.SessionArgs, sessionID)
}

// ResumeRunnerArgs are the user's --runner-arg values followed by the
// resume arguments for sessionID: what a follow-up turn passes to Argv.
// Without an id they are the ResumeLastArgs.
func (s Spec) ResumeRunnerArgs(runnerArgs []string, sessionID string) []string {
	if sessionID == "" {
		return append(append([]string(nil), runnerArgs...), s.ResumeLastArgs...)
	}
	return append(append([]string(nil), runnerArgs...), withSession(s.ResumeArgs, sessionID)...)
}

// resumeArgv is the command line of a follow-up turn.
func (s Spec) resumeArgv(headless bool, runnerArgs []string, sessionID, prompt string, paths Paths) []string {
	return s.Argv(headless, s.ResumeRunnerArgs(runnerArgs, sessionID), prompt, paths)
}

func withSession(tmpl []string, id string) []string {
	out := make([]string, len(tmpl))
	for i, a := range tmpl {
		out[i] = strings.ReplaceAll(a, "{session_id}", id)
	}
	return out
}

// NewSessionID is a random (version 4) UUID, the form claude's
// --session-id takes.
func NewSessionID() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return ""
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}
