package cli

import "github.com/alecthomas/kong"

// AgencyCLI is the grammar of `git agency`.
type AgencyCLI struct {
	Version kong.VersionFlag `help:"Print the version and exit."`

	Worktree WorktreeCmd `cmd:"" help:"Manage integration worktrees: named, human-owned branches in their own directories."`
	Agent    AgentCmd    `cmd:"" help:"Run coding agents in sandboxes and inspect them."`

	Checkpoint CheckpointCmd `cmd:"" help:"List, take and roll back to an invocation's sandbox checkpoints."`

	Man       ManCmd       `cmd:"" hidden:"" help:"Print the man page (roff) for this program."`
	Supervise SuperviseCmd `cmd:"" hidden:"" help:"Supervise one invocation (started by agent start)."`
}

// SandboxCLI is the grammar of `git sandbox`.
type SandboxCLI struct {
	Version kong.VersionFlag `help:"Print the version and exit."`

	Man       ManCmd       `cmd:"" hidden:"" help:"Print the man page (roff) for this program."`
	Supervise SuperviseCmd `cmd:"" hidden:"" help:"Supervise one invocation (started by agent start)."`
}
