package cli

import "github.com/alecthomas/kong"

// AgencyCLI is the grammar of `git agency`.
type AgencyCLI struct {
	Version kong.VersionFlag `help:"Print the version and exit."`
	RepoFlag

	Worktree WorktreeCmd `cmd:"" help:"Manage integration worktrees: named, human-owned branches in their own directories."`
	Agent    AgentCmd    `cmd:"" help:"Run coding agents in sandboxes and inspect them."`
	Run      RunCmd      `cmd:"" help:"Create a worktree, open it, and start an agent on it (worktree create --open + agent start); if the agent cannot start, the new worktree is taken back."`
	Watch    WatchCmd    `cmd:"" help:"Live view of the worktrees and their agents; keys act on the selection (? for help)."`
	Doctor   DoctorCmd   `cmd:"" help:"Check git, tmux, runners, the data directory and this repository's records; exit 1 on a problem."`
	Setup    SetupCmd    `cmd:"" help:"Show and approve the setup a project declares for other agent tools (.cursor/worktrees.json, .codex/environments/environment.toml)."`
	GC       GCCmd       `cmd:"" name:"gc" help:"Remove what crashes and outside deletions left behind (a dry run unless on a terminal or --yes)."`

	Checkpoint CheckpointCmd `cmd:"" help:"List, take and roll back to an invocation's sandbox checkpoints."`
	Undo       UndoCmd       `cmd:"" help:"Reverse the newest land, discard, checkpoint apply or worktree rm --force not undone yet, after finishing an interrupted undo (--list: the operation log)."`
	Help       HelpCmd       `cmd:"" help:"Print a command's page: description, options, examples, exit status, errors (without a command: the list of commands)."`
	Host       HostCmd       `cmd:"" help:"Your other machines as hosts for agents (agency.host.<name>.ssh): list, check, install git-agency there."`

	HostServe HostServeCmd `cmd:"" name:"host-serve" hidden:"" help:"What another machine's git-agency runs here over ssh."`
	HostFetch HostFetchCmd `cmd:"" name:"host-fetch" hidden:"" help:"Fetch one host's work in the background (started by the commands that act)."`
	Man       ManCmd       `cmd:"" hidden:"" help:"Print a man page (roff): the program's, or one command's (--list: their names)."`
	Supervise SuperviseCmd `cmd:"" hidden:"" help:"Supervise one invocation (started by agent start)."`

	Completion CompletionCmd `cmd:"" hidden:"" help:"Print the bash or zsh completion script (defines _git_agency / _git-agency)."`
	Complete   CompleteCmd   `cmd:"" name:"__complete" hidden:"" help:"List worktree names, invocation ids or runners for completion."`
}

// SandboxCLI is the grammar of `git sandbox`.
type SandboxCLI struct {
	Version kong.VersionFlag `help:"Print the version and exit."`
	RepoFlag

	// The same command structs as `git agency agent …`: one code path.
	Ls      AgentLsCmd      `cmd:"" aliases:"list" help:"List sandboxes (agent invocations)."`
	Show    AgentShowCmd    `cmd:"" help:"Show one sandbox's invocation record."`
	Diff    AgentDiffCmd    `cmd:"" help:"Show what the agent changed: commits, their diff, commits off its branch, then uncommitted work."`
	Land    AgentLandCmd    `cmd:"" help:"Land the sandbox on its integration worktree (--check: only predict)."`
	Discard AgentDiscardCmd `cmd:"" help:"Throw the sandbox away (a running agent is stopped first; commits on a detached HEAD are kept under refs/agency/kept/; 'git agency undo' brings it back)."`
	Logs    AgentLogsCmd    `cmd:"" help:"Print the agent's output; --follow streams it."`
	Open    AgentOpenCmd    `cmd:"" help:"Open the sandbox in your editor."`
	Send    AgentSendCmd    `cmd:"" help:"Give the agent a follow-up prompt in its own sandbox and conversation."`
	Stop    AgentStopCmd    `cmd:"" help:"Stop the agent gracefully."`
	Kill    AgentKillCmd    `cmd:"" help:"Kill the agent."`
	Attach  AgentAttachCmd  `cmd:"" help:"Attach to a headed agent's tmux session."`

	Checkpoints SandboxCheckpointsCmd `cmd:"" help:"List the sandbox's checkpoints."`
	Rollback    SandboxRollbackCmd    `cmd:"" help:"Roll the sandbox back to a checkpoint (saving the current state as a checkpoint first)."`
	Help        HelpCmd               `cmd:"" help:"Print a command's page: description, options, examples, exit status, errors (without a command: the list of commands)."`

	Man       ManCmd       `cmd:"" hidden:"" help:"Print a man page (roff): the program's, or one command's (--list: their names)."`
	Supervise SuperviseCmd `cmd:"" hidden:"" help:"Supervise one invocation (started by agent start)."`

	Completion CompletionCmd `cmd:"" hidden:"" help:"Print the bash or zsh completion script (defines _git_agency / _git-agency)."`
	Complete   CompleteCmd   `cmd:"" name:"__complete" hidden:"" help:"List worktree names, invocation ids or runners for completion."`
}
