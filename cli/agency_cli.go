package cli

import "github.com/alecthomas/kong"

// AgencyCLI is the grammar of `git agency`.
type AgencyCLI struct {
	Version kong.VersionFlag `help:"Print the version and exit."`

	Worktree WorktreeCmd `cmd:"" help:"Manage integration worktrees: named, human-owned branches in their own directories."`
	Agent    AgentCmd    `cmd:"" help:"Run coding agents in sandboxes and inspect them."`
	Run      RunCmd      `cmd:"" help:"Create a worktree, open it, and start an agent on it (worktree create --open + agent start)."`

	Man       ManCmd       `cmd:"" hidden:"" help:"Print the man page (roff) for this program."`
	Supervise SuperviseCmd `cmd:"" hidden:"" help:"Supervise one invocation (started by agent start)."`
}

// SandboxCLI is the grammar of `git sandbox`.
type SandboxCLI struct {
	Version kong.VersionFlag `help:"Print the version and exit."`

	// The same command structs as `git agency agent …`: one code path.
	Ls      AgentLsCmd      `cmd:"" aliases:"list" help:"List sandboxes (agent invocations)."`
	Show    AgentShowCmd    `cmd:"" help:"Show one sandbox's invocation record."`
	Diff    AgentDiffCmd    `cmd:"" help:"Show what the agent changed: commits, their diff, then uncommitted work."`
	Land    AgentLandCmd    `cmd:"" help:"Land the sandbox on its integration worktree (--check: only predict)."`
	Discard AgentDiscardCmd `cmd:"" help:"Throw the sandbox away (a running agent is stopped first)."`
	Logs    AgentLogsCmd    `cmd:"" help:"Print the agent's output; --follow streams it."`
	Open    AgentOpenCmd    `cmd:"" help:"Open the sandbox in your editor."`
	Stop    AgentStopCmd    `cmd:"" help:"Stop the agent gracefully."`
	Kill    AgentKillCmd    `cmd:"" help:"Kill the agent."`

	Man       ManCmd       `cmd:"" hidden:"" help:"Print the man page (roff) for this program."`
	Supervise SuperviseCmd `cmd:"" hidden:"" help:"Supervise one invocation (started by agent start)."`
}
