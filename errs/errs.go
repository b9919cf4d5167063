// Package errs holds git-agency's typed errors: a stable code, a message and
// a hint. It is a leaf package (it imports nothing of ours) so that store,
// gitcore and agency can all return the same kind of error, and the CLI can
// print every one as `error: E_CODE: message` then `hint: …`.
//
// Every user-facing message lives in messages.go so wording stays consistent.
package errs

import (
	"errors"
	"fmt"
)

// Code is a stable, documented error code. Scripts may match on it.
type Code string

// The codes. docs/errors.md lists each with its cause and fix.
const (
	ENotARepo          Code = "E_NOT_A_REPO"
	EBareRepo          Code = "E_BARE_REPO"
	EDirtyWorktree     Code = "E_DIRTY_WORKTREE"
	ENameTaken         Code = "E_NAME_TAKEN"
	EInvalidName       Code = "E_INVALID_NAME"
	ENotFound          Code = "E_NOT_FOUND"
	EAmbiguous         Code = "E_AMBIGUOUS"
	EStoreCorrupt      Code = "E_STORE_CORRUPT"
	ELocked            Code = "E_LOCKED"
	EInterrupted       Code = "E_INTERRUPTED"
	EDetachedHead      Code = "E_DETACHED_HEAD"
	EBranchNotFound    Code = "E_BRANCH_NOT_FOUND"
	ENoEditor          Code = "E_NO_EDITOR"
	EEditorFailed      Code = "E_EDITOR_FAILED"
	EArchived          Code = "E_ARCHIVED"
	EGit               Code = "E_GIT"
	EIO                Code = "E_IO"
	EUsage             Code = "E_USAGE"
	EConfig            Code = "E_CONFIG"
	EInvocationRunning Code = "E_INVOCATION_RUNNING"
	ELandConflict      Code = "E_LAND_CONFLICT"
	ENothingToLand     Code = "E_NOTHING_TO_LAND"
	ERunnerNotFound    Code = "E_RUNNER_NOT_FOUND"
	ETmuxNotFound      Code = "E_TMUX_NOT_FOUND"
	ETooManyActive     Code = "E_TOO_MANY_ACTIVE"
	ENotIntegration    Code = "E_NOT_INTEGRATION_TREE"
	EIntegrationTree   Code = "E_INTEGRATION_TREE"
	EPromptEmpty       Code = "E_PROMPT_EMPTY"
	EPromptInvalid     Code = "E_PROMPT_INVALID"
	ENotHeaded         Code = "E_NOT_HEADED"
	ENotRunning        Code = "E_NOT_RUNNING"
	EBaseMoved         Code = "E_BASE_MOVED"
	EUnlandedChanges   Code = "E_UNLANDED_CHANGES"
	EDenylisted        Code = "E_DENYLISTED"
	ECheckpointFailed  Code = "E_CHECKPOINT_FAILED"
	EUnsafePath        Code = "E_UNSAFE_PATH"
	EHasInvocations    Code = "E_HAS_INVOCATIONS"
	EInternal          Code = "E_INTERNAL"
	ENestedRepo        Code = "E_NESTED_REPO"
	EWrongBranch       Code = "E_WRONG_BRANCH"
	EAlreadyLanded     Code = "E_ALREADY_LANDED"
	ENotQueued         Code = "E_NOT_QUEUED"
	// Adopting an existing worktree (`worktree adopt`).
	ENotAWorktree   Code = "E_NOT_A_WORKTREE"
	EMainWorktree   Code = "E_MAIN_WORKTREE"
	EOtherRepo      Code = "E_OTHER_REPO"
	EAlreadyAdopted Code = "E_ALREADY_ADOPTED"
	// Ready sandboxes: .worktreeinclude and project setups.
	EIncludeInvalid Code = "E_INCLUDE_INVALID"
	EIncludeOutside Code = "E_INCLUDE_OUTSIDE"
	ECopyFailed     Code = "E_COPY_FAILED"
	ESetupInvalid   Code = "E_SETUP_INVALID"
	// `agent send`: a follow-up prompt that cannot be given.
	EDiscarded Code = "E_DISCARDED"
	ENoSession Code = "E_NO_SESSION"
	ENoResume  Code = "E_NO_RESUME"
	// `doctor` found something wrong.
	EUnhealthy Code = "E_UNHEALTHY"
	// `undo`.
	ENothingToUndo Code = "E_NOTHING_TO_UNDO"
	EChangedSince  Code = "E_CHANGED_SINCE"
	EUndoExpired   Code = "E_UNDO_EXPIRED"
	// A land would point a submodule at a commit only the sandbox has.
	ELandSubmodule Code = "E_LAND_SUBMODULE"
	// Git setups git-agency cannot work in as they are.
	ENoIdentity     Code = "E_NO_IDENTITY"
	ESigningFailed  Code = "E_SIGNING_FAILED"
	EHookFailed     Code = "E_HOOK_FAILED"
	EBranchAgency   Code = "E_BRANCH_AGENCY"
	EAgencyDir      Code = "E_AGENCY_DIR"
	ENoMainWorktree Code = "E_NO_MAIN_WORKTREE"
	// Verified landing (agency.verify).
	EVerifyFailed Code = "E_VERIFY_FAILED"
	// The check was stopped (Ctrl-C, timeout), or could not run.
	EVerifyCancelled Code = "E_VERIFY_CANCELLED"
	// land --check found an interrupted land (it does not finish it).
	ELandInterrupted Code = "E_LAND_INTERRUPTED"
	EVerifyError     Code = "E_VERIFY_ERROR"
	EVerifyRunning   Code = "E_VERIFY_RUNNING"
	EHeadMoving      Code = "E_HEAD_MOVING"
	ELandSome        Code = "E_LAND_SOME"
	// The wall (agency.isolate).
	EWallUnavailable Code = "E_WALL_UNAVAILABLE"
	EWallFailed      Code = "E_WALL_FAILED"

	// Hosts (agency.host.*).
	EHost            Code = "E_HOST"
	EHostUnreachable Code = "E_HOST_UNREACHABLE"
	EHostVersion     Code = "E_HOST_VERSION"
	ERefMoved        Code = "E_REF_MOVED"
)

// Error is the one error type git-agency shows to users.
type Error struct {
	Code Code
	Msg  string
	Hint string
	// Detail lines are printed after the message (candidate ids, file names,
	// a record directory, …).
	Detail []string
	// Err is the underlying cause, if any (kept for errors.Is/As).
	Err error
	// Exit overrides the process exit status (0 means the default, 1).
	Exit int
}

func (e *Error) Error() string {
	if e.Err != nil && e.Msg == "" {
		return string(e.Code) + ": " + e.Err.Error()
	}
	return string(e.Code) + ": " + e.Msg
}

func (e *Error) Unwrap() error { return e.Err }

// New builds an Error with a formatted message.
func New(code Code, hint, format string, args ...any) *Error {
	return &Error{Code: code, Msg: fmt.Sprintf(format, args...), Hint: hint}
}

// Wrap builds an Error around a cause; the cause's text is appended.
func Wrap(code Code, err error, hint, format string, args ...any) *Error {
	msg := fmt.Sprintf(format, args...)
	if err != nil {
		msg += ": " + err.Error()
	}
	return &Error{Code: code, Msg: msg, Hint: hint, Err: err}
}

// With returns a copy of e with detail lines added.
func (e *Error) With(detail ...string) *Error {
	c := *e
	c.Detail = append(append([]string(nil), e.Detail...), detail...)
	return &c
}

// As returns the *Error in err's chain, or an E_INTERNAL wrapper.
func As(err error) *Error {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return &Error{Code: EInternal, Msg: err.Error(), Err: err}
}

// Is reports whether err carries the given code.
func Is(err error, code Code) bool {
	var e *Error
	return errors.As(err, &e) && e.Code == code
}
