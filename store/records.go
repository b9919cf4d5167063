package store

// Worktree states.
const (
	StatePresent  = "present"
	StateArchived = "archived"
)

// WorktreeRecord is integration_worktrees/<id>/meta.json.
type WorktreeRecord struct {
	SchemaVersion string `json:"schema_version"`
	WorktreeID    string `json:"worktree_id"`
	Name          string `json:"name"`
	RepoID        string `json:"repo_id"`
	Branch        string `json:"branch"`
	ParentBranch  string `json:"parent_branch"`
	TreePath      string `json:"tree_path"`
	CreatedAt     string `json:"created_at"`
	LastUsedAt    string `json:"last_used_at,omitempty"`
	State         string `json:"state"`
	// Adopted is true for a worktree that existed before git agency took it
	// over (`worktree adopt`): its directory is not under the data dir.
	Adopted    bool   `json:"adopted,omitempty"`
	ArchivedAt string `json:"archived_at,omitempty"`
	// Include: the ignored files .worktreeinclude copied in; Sparse: the
	// tree inherited its source's sparse-checkout patterns.
	Include *IncludeStats `json:"include,omitempty"`
	Sparse  bool          `json:"sparse,omitempty"`
}

// IncludeStats is what a .worktreeinclude copy did.
type IncludeStats struct {
	Files      int   `json:"files"`
	Bytes      int64 `json:"bytes"`
	DurationMS int64 `json:"duration_ms"`
	// Cloned counts files copied as copy-on-write clones.
	Cloned int `json:"cloned"`
	// Skipped: paths the patterns named that were not copied because
	// the new tree does not ignore them (their ignore rule is not
	// committed): a copy would enter checkpoints and lands.
	Skipped []string `json:"skipped,omitempty"`
	// Sources says where the patterns came from: ".worktreeinclude",
	// "git config agency.include", or both.
	Sources []string `json:"sources,omitempty"`
	// Outside: a copied virtualenv or node_modules that still points
	// outside the new tree (its editable install, its links), one
	// sentence each saying what to do instead.
	Outside []string `json:"outside,omitempty"`
}

// Invocation lifecycle states.
const (
	StatusStarting = "starting"
	StatusRunning  = "running"
	StatusFinished = "finished"
	StatusFailed   = "failed"
	// StatusQueued: recorded by `agent start --queue` over agency.maxActive;
	// its sandbox exists, its supervisor starts when a slot frees.
	StatusQueued = "queued"
)

// Exit reasons.
const (
	ExitExited      = "exited"
	ExitKilled      = "killed"
	ExitStopped     = "stopped"
	ExitUnknown     = "unknown"
	ExitTimeout     = "timeout"
	ExitSetupFailed = "setup_failed"
)

// Landing states.
const (
	LandingPending   = "pending"
	LandingLanded    = "landed"
	LandingDiscarded = "discarded"
)

// Modes.
const (
	ModeHeadless = "headless"
	ModeHeaded   = "headed"
)

// Usage is a runner's reported consumption.
type Usage struct {
	Turns        int   `json:"turns"`
	InputTokens  int64 `json:"input_tokens"`
	OutputTokens int64 `json:"output_tokens"`
	// CachedInputTokens and ReasoningTokens are parts of the two above.
	CachedInputTokens int64    `json:"cached_input_tokens,omitempty"`
	ReasoningTokens   int64    `json:"reasoning_tokens,omitempty"`
	CostUSD           *float64 `json:"cost_usd"`
}

// LandProgress records a land in flight so an interrupted one can be
// detected and never applied twice.
type LandProgress struct {
	State      string   `json:"state"` // "in_progress", "done", "interrupted"
	StartedAt  string   `json:"started_at,omitempty"`
	TargetHead string   `json:"target_head,omitempty"` // integration HEAD before the land
	Commits    []string `json:"commits,omitempty"`     // sandbox commits being landed
	Applied    bool     `json:"applied,omitempty"`     // --apply part included
	ResultHead string   `json:"result_head,omitempty"`
	Note       string   `json:"note,omitempty"`
	// Restore is the sandbox's state before the land (undo recreates it).
	Restore *Restore `json:"restore,omitempty"`
}

// InvocationRecord is invocations/<inv>/meta.json: the single source of
// truth for an invocation and its sandbox. Field names are part of the
// --json output and of records on disk: they never change.
type InvocationRecord struct {
	SchemaVersion         string   `json:"schema_version"`
	InvocationID          string   `json:"invocation_id"`
	IntegrationWorktreeID string   `json:"integration_worktree_id"`
	RepoID                string   `json:"repo_id"`
	SandboxPath           string   `json:"sandbox_path"`
	SandboxBranch         string   `json:"sandbox_branch"`
	BaseCommit            string   `json:"base_commit"`
	Runner                string   `json:"runner"`
	Mode                  string   `json:"mode"`
	Command               []string `json:"command,omitempty"`
	PID                   *int     `json:"pid"`
	PIDStartTime          *uint64  `json:"pid_start_time,omitempty"`
	SupervisorPID         *int     `json:"supervisor_pid,omitempty"`
	SupervisorStartTime   *uint64  `json:"supervisor_start_time,omitempty"`
	TmuxSession           *string  `json:"tmux_session"`
	// TmuxPane is the agent's own pane ("%7"): stop and reconcile target it,
	// not whatever pane is active after a user split the window.
	TmuxPane string `json:"tmux_pane,omitempty"`
	// WindowWidth/Height: the headed session's initial size (the starting
	// terminal's, when there was one).
	WindowWidth  int    `json:"window_width,omitempty"`
	WindowHeight int    `json:"window_height,omitempty"`
	StartedAt    string `json:"started_at"`
	// QueuedAt is when `agent start --queue` queued it (its place in the
	// queue); started_at is rewritten when it starts.
	QueuedAt         string  `json:"queued_at,omitempty"`
	FinishedAt       *string `json:"finished_at"`
	Status           string  `json:"status"`
	ExitReason       *string `json:"exit_reason"`
	ExitCode         *int    `json:"exit_code"`
	LastOutputAt     *string `json:"last_output_at"`
	LandingStatus    *string `json:"landing_status"`
	PromptSource     string  `json:"prompt_source,omitempty"`
	PromptPath       string  `json:"prompt_path,omitempty"`
	IncludeUntracked bool    `json:"include_untracked"`
	SetupStatus      string  `json:"setup_status,omitempty"` // "", running, succeeded, failed
	SetupExitCode    *int    `json:"setup_exit_code,omitempty"`
	// SetupSource names where the setup came from (agency.setup,
	// .cursor/worktrees.json, …); SetupScript is what the supervisor runs.
	SetupSource string `json:"setup_source,omitempty"`
	SetupScript string `json:"setup_script,omitempty"`
	// SetupUnapproved names a project setup that did not run because its
	// content was not approved (`git agency setup approve`).
	SetupUnapproved string `json:"setup_unapproved,omitempty"`
	// Include and Sparse: as on the worktree record, for the sandbox.
	Include *IncludeStats `json:"include,omitempty"`
	Sparse  bool          `json:"sparse,omitempty"`
	// Isolation is what walls the invocation's processes in: "bwrap", or
	// "none" (agency.isolate off, or auto where bubblewrap cannot).
	Isolation string `json:"isolation,omitempty"`
	// Host names the host (agency.host.<name>) the agent runs on; "" for
	// this machine. Such a record is kept by what the host says (the
	// host's own record has the same id); its work comes back as refs.
	Host string `json:"host,omitempty"`
	// HostStartKey, in a host's own record, is the key its caller chose
	// for the start (its intent there): a caller killed before it wrote
	// its record finds the agent by it (adoptHostStarts).
	HostStartKey string `json:"host_start_key,omitempty"`
	Error        string `json:"error,omitempty"`
	// LogsIncomplete says why the logs miss some of the agent's output (a
	// write failed: a full disk); "" when they are complete.
	LogsIncomplete string `json:"logs_incomplete,omitempty"`
	// RecordPending says why this record does not have what its
	// supervisor knows yet (the repo lock held for long, a full disk); it
	// comes from the outcome file (applyOutcome) and is never written.
	RecordPending string `json:"record_pending,omitempty"`
	// StopRequested records a stop/kill asked for by a user ("stopped",
	// "killed") so the supervisor can set exit_reason.
	StopRequested   string `json:"stop_requested,omitempty"`
	SemanticStatus  string `json:"semantic_status,omitempty"`
	SemanticSummary string `json:"semantic_summary,omitempty"`
	Usage           *Usage `json:"usage,omitempty"`
	// SessionID is the runner's conversation id (claude session_id, codex
	// thread_id), with which the conversation can be resumed (agent send).
	SessionID string `json:"session_id,omitempty"`
	// Turns counts the prompts given through git-agency: 1 for agent start,
	// one more for each agent send.
	Turns int `json:"turns,omitempty"`
	// TurnStartedAt is when the latest follow-up turn began (agent send).
	TurnStartedAt string `json:"turn_started_at,omitempty"`
	// RunnerArgs are the user's --runner-arg values, given again on every
	// turn.
	RunnerArgs  []string      `json:"runner_args,omitempty"`
	Land        *LandProgress `json:"land,omitempty"`
	LandedAt    *string       `json:"landed_at,omitempty"`
	DiscardedAt *string       `json:"discarded_at,omitempty"`

	// VerifyState: the latest verify of the candidate a land would make.
	VerifyState
}

// Str returns a pointer to s (for the record's nullable strings).
func Str(s string) *string { return &s }

// Int returns a pointer to n.
func Int(n int) *int { return &n }

// Deref returns *p or "".
func Deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}
