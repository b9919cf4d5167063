package store

import "path/filepath"

// Verify statuses (InvocationRecord.VerifyStatus; "" reads as none).
const (
	VerifyNone    = "none"
	VerifyRunning = "running"
	VerifyPassed  = "passed"
	VerifyFailed  = "failed"
	// VerifyCancelled: the check was stopped before it could say (Ctrl-C,
	// agency.verify.timeout); VerifyErrored: it could not run (the command
	// was not found or not executable, the wall or its log could not be
	// made). Neither says anything of the work.
	VerifyCancelled = "cancelled"
	VerifyErrored   = "error"
)

// VerifyState is what the invocation's latest verify did: the check
// (agency.verify) run on the candidate a land of it would produce, in a
// throwaway verify tree. It is part of the invocation record.
type VerifyState struct {
	// VerifyStatus is none (""), running, passed, failed, cancelled or
	// error.
	VerifyStatus string `json:"verify_status,omitempty"`
	// VerifyLog is the path of the latest verify's log.
	VerifyLog string `json:"verify_log,omitempty"`
	// VerifyCommit is the candidate the check ran on; VerifyOnto the
	// integration HEAD it was built on; VerifyTree its tree.
	VerifyCommit string `json:"verify_commit,omitempty"`
	VerifyOnto   string `json:"verify_onto,omitempty"`
	VerifyTree   string `json:"verify_tree,omitempty"`
	// VerifyKey is what a pass is reused by: the candidate's tree, the
	// integration tip it was built on, the check, the setup and the
	// include patterns (agency's verifyKey). VerifyReusedFrom: the land
	// reused a pass of this candidate instead of running the check.
	VerifyKey        string `json:"verify_key,omitempty"`
	VerifyReusedFrom string `json:"verify_reused_from,omitempty"`
	// VerifiedAsPartOf: a member of a batch passed as part of this
	// candidate, the top of its stack; its own candidate was not checked.
	VerifiedAsPartOf string `json:"verified_as_part_of,omitempty"`
	// VerifyCommand is the command that ran; VerifyExitCode its exit
	// status (nil when it did not run to an end); VerifyError why it
	// failed without a plain exit status (timed out, could not start).
	VerifyCommand  string `json:"verify_command,omitempty"`
	VerifyExitCode *int   `json:"verify_exit_code,omitempty"`
	VerifyError    string `json:"verify_error,omitempty"`
	// VerifyStartedAt and VerifyDurationMS time the latest verify.
	VerifyStartedAt string `json:"verify_started_at,omitempty"`
	// VerifyHost is the host of agency.verify.hosts the latest check ran
	// on ("" for here).
	VerifyHost       string `json:"verify_host,omitempty"`
	VerifyDurationMS int64  `json:"verify_duration_ms,omitempty"`
	// VerifyPID and VerifyPIDStartTime are the land process running the
	// verify (a running verify whose process is gone was interrupted).
	VerifyPID          *int    `json:"verify_pid,omitempty"`
	VerifyPIDStartTime *uint64 `json:"verify_pid_start_time,omitempty"`
	// VerifySkipped: the invocation was landed with --no-verify.
	VerifySkipped bool `json:"verify_skipped,omitempty"`
	// VerifySendBack: a red verify was sent back to the agent as a
	// follow-up; its next finish is verified (and landed) again.
	// VerifyRounds counts the verifies sent back so far.
	VerifySendBack bool `json:"verify_send_back,omitempty"`
	VerifyRounds   int  `json:"verify_rounds,omitempty"`
	// VerifyApply: the land sent back was asked with --apply (its
	// uncommitted work too); the verify after the agent's next finish
	// lands the same way.
	VerifyApply bool `json:"verify_apply,omitempty"`
}

// Verify trees: verify/<inv>/{tree/,verify.log} (a failed one's tree is
// kept for inspection until the next verify of the invocation or gc).

func (s *Store) VerifiesDir() string              { return filepath.Join(s.RepoDir(), "verify") }
func (s *Store) VerifyDir(inv string) string      { return filepath.Join(s.VerifiesDir(), inv) }
func (s *Store) VerifyTreePath(inv string) string { return filepath.Join(s.VerifyDir(inv), "tree") }

// VerifyLogPath is the invocation's verify log (kept with its record).
func (s *Store) VerifyLogPath(inv string) string {
	return filepath.Join(s.InvocationDir(inv), "verify.log")
}
