package cli

// configKey documents one `git config agency.*` setting for the man page.
type configKey struct{ Key, Meaning, Default string }

// configKeys are the settings git-agency reads (docs/configuration.md has the same
// table; TestConfigKeysMatchConfigurationPage keeps them in step). Add a line when you add a setting.
var configKeys = []configKey{
	{"agency.dataDir", "where records and trees live ($AGENCY_DATA_DIR wins over it)", "$XDG_DATA_HOME/agency, else ~/.local/share/agency"},
	{"agency.editor", "editor for open and --open", "$VISUAL, $EDITOR"},
	{"agency.lockTimeout", "how long a command waits for the repository lock (Go duration)", "30s"},
	{"agency.defaultRunner", "the runner agent start uses without --runner", "claude"},
	{"agency.runner.<name>.command", "the runner's program (overrides a built-in's)", "built-ins: claude, codex"},
	{"agency.runner.<name>.arg", "extra argument in both modes (multi-valued); {sandbox}, {gitdir} and {commondir} are replaced by the sandbox's paths", ""},
	{"agency.runner.<name>.headlessArg, .headedArg", "extra argument for one mode (multi-valued)", ""},
	{"agency.runner.<name>.resumeArg", "argument that resumes a conversation for agent send, {session_id} replaced (multi-valued)", "built-ins: claude --resume {session_id}, codex resume {session_id}; others: not resumable"},
	{"agency.runner.<name>.timeout, agency.timeout", "wall-clock limit of a run", "none"},
	{"agency.runner.<name>.idleTimeout, agency.idleTimeout", "limit on a stretch without output", "none"},
	{"agency.runner.<name>.format", "stdout stream format: claude, codex, auto, or empty for none", "built-ins: their own"},
	{"agency.runner.<name>.unattended", "inside the wall: true, the built-in works without asking in headed runs too; false, it asks as on its own (never added without the wall)", "headless runs inside the wall work alone, headed ones ask"},
	{"agency.runner.<name>.hooks", "claude: a headed claude reports its state through hooks (--settings); none: not", "built-in claude: claude"},
	{"agency.runner.<name>.quit", "what agent stop types at a headed runner's prompt when C-c ended only its turn (then the session is killed)", "built-ins: claude /exit, codex /quit; others: none"},
	{"agency.notify.command", "shell command run when an agent needs input, finishes or fails (JSON on stdin)", ""},
	{"agency.notify.timeout", "how long a notify command may run", "10s"},
	{"agency.maxActive", "how many agents may run at once in this repository", "unlimited"},
	{"agency.queue", "true: a start over agency.maxActive is queued (as agent start --queue)", "false"},
	{"agency.setup", "a script run in every new sandbox before the runner (wins over project setups; no approval)", ""},
	{"agency.include", "more .worktreeinclude patterns: ignored files copied into new trees (multi-valued)", ""},
	{"agency.setupApproved", "sha256 of approved project setup content (multi-valued; local config; written by setup approve)", ""},
	{"agency.stallThreshold", "how long without output before an agent shows as stalled", "5m"},
	{"agency.checkpoint.debounce", "quiet time before a checkpoint is taken", "3s"},
	{"agency.checkpoint.rateLimit", "least time between two checkpoints", "10s"},
	{"agency.checkpoint.fallbackInterval", "period of the dirty-check fallback", "30s"},
	{"agency.checkpoint.denylist", "more paths that never enter a checkpoint or a land (multi-valued)", ""},
	{"agency.checkpoint.exclude", "untracked files checkpoints leave out, gitignore syntax (multi-valued; kept in the sandbox, landed by --apply)", ""},
	{"agency.checkpoint.maxFileSize", "untracked files larger than this (bytes; k, m, g) are left out of checkpoints; 0 for no limit", "50m"},
	{"agency.watch.interval", "how often watch refreshes", "1s"},
	{"agency.gc.olderThan", "gc's default --older-than", "30d"},
	{"agency.verify", "shell command that checks the candidate of every land before the integration branch moves", ""},
	{"agency.worktree.<name>.verify", "the same for one integration worktree (wins over agency.verify)", ""},
	{"agency.verify.timeout", "how long a verify (setup and check) may run", "30m"},
	{"agency.verify.sendBack", "true: a red verify becomes a follow-up prompt to the agent (as land --send-back)", "false"},
	{"agency.verify.maxRounds", "most red verifies of one invocation sent back to its agent", "3"},
	{"agency.autoLand", "true: an invocation that finishes with commits and lands cleanly is verified and landed by its supervisor", "false"},
	{"agency.isolate", "auto: wall every agent in bubblewrap where it works (else warn and run unwalled); bwrap: refuse to start without the wall; off: no wall", "auto"},
	{"agency.isolate.network", "shared: walled agents use the network; none: cut it", "shared"},
	{"agency.isolate.writable", "more paths a walled agent may write (multi-valued; ~/ is HOME)", ""},
	{"agency.isolate.hide", "paths a walled agent cannot see, e.g. ~/.ssh, ~/.aws (multi-valued; ~/ is HOME)", ""},
}
