package core

// StartOptions are the inputs of `agent start`: agency starts with them,
// and so does the host side (remote) for a start on a host or in its mirror.
type StartOptions struct {
	Worktree           string
	Runner             string
	Headless           bool
	Prompt             string
	PromptSource       string // "flag", "file", "editor", ""
	PromptPath         string
	RunnerArgs         []string
	NoIncludeUntracked bool
	// Full opts out of the integration tree's sparse checkout.
	Full bool
	// WindowWidth/Height size a headed session (0: tmux's default).
	WindowWidth, WindowHeight int
	// Queue records a start over agency.maxActive as queued instead of
	// refusing it (also agency.queue).
	Queue bool
	// Base, when set, is the commit the sandbox starts from instead of the
	// integration HEAD (a host's start: the caller's HEAD, pushed).
	Base string
	// LineageBase, when set, is the record's base commit instead of Base:
	// a run continuing another's sandbox branch (agent send --host) counts
	// its work from where that one began, so landing it carries both.
	LineageBase string
	// HostStartKey is the key a host's caller chose for this start
	// (HostStartRequest.StartKey), kept in the record.
	HostStartKey string
}
