package cli

import "github.com/alecthomas/kong"

// AgencyCLI is the grammar of `git agency`.
type AgencyCLI struct {
	Version kong.VersionFlag `help:"Print the version and exit."`

	Worktree WorktreeCmd `cmd:"" help:"Manage integration worktrees: named, human-owned branches in their own directories."`
	Agent    AgentCmd    `cmd:"" help:"Run coding agents in sandboxes and inspect them."`
	Watch    WatchCmd    `cmd:"" help:"Live view of the worktrees and their agents; keys act on the selection (? for help)."`
	Doctor   DoctorCmd   `cmd:"" help:"Check git, tmux, runners, the data directory and this repository's records; exit 1 on a problem."`
	GC       GCCmd       `cmd:"" name:"gc" help:"Remove what crashes and outside deletions left behind (a dry run unless on a terminal or --yes)."`

	Man       ManCmd       `cmd:"" hidden:"" help:"Print the man page (roff) for this program."`
	Supervise SuperviseCmd `cmd:"" hidden:"" help:"Supervise one invocation (started by agent start)."`

	Completion CompletionCmd `cmd:"" hidden:"" help:"Print the bash or zsh completion script (defines _git_agency / _git-agency)."`
	Complete   CompleteCmd   `cmd:"" name:"__complete" hidden:"" help:"List worktree names, invocation ids or runners for completion."`
}

// SandboxCLI is the grammar of `git sandbox`.
type SandboxCLI struct {
	Version kong.VersionFlag `help:"Print the version and exit."`

	Man       ManCmd       `cmd:"" hidden:"" help:"Print the man page (roff) for this program."`
	Supervise SuperviseCmd `cmd:"" hidden:"" help:"Supervise one invocation (started by agent start)."`

	Completion CompletionCmd `cmd:"" hidden:"" help:"Print the bash or zsh completion script (defines _git_agency / _git-agency)."`
	Complete   CompleteCmd   `cmd:"" name:"__complete" hidden:"" help:"List worktree names, invocation ids or runners for completion."`
}
