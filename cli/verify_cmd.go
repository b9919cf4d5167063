package cli

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/git-agency/git-agency/agency"
	"github.com/git-agency/git-agency/errs"
	"github.com/git-agency/git-agency/store"
)

// printVerifyLog is `agent logs --verify`: the latest verify's log.
func printVerifyLog(env *Env, a *agency.App, rec *store.InvocationRecord) error {
	path := rec.VerifyLog
	if path == "" {
		path = a.Store.VerifyLogPath(rec.InvocationID)
	}
	f, err := os.Open(path)
	if err != nil {
		return errs.VerifyLogMissing(rec.InvocationID)
	}
	defer f.Close()
	_, err = io.Copy(env.Stdout, f)
	return err
}

// verifyMark is agent ls's mark of the latest verify, after the LANDS
// column's forecast: "" when never verified.
func verifyMark(r *store.InvocationRecord) string {
	switch agency.VerifyStatusOf(r) {
	case store.VerifyRunning:
		return " verifying"
	case store.VerifyFailed:
		return " verify:failed"
	case store.VerifyCancelled:
		return " verify:cancelled"
	case store.VerifyErrored:
		return " verify:error"
	case store.VerifyPassed:
		if store.Deref(r.LandingStatus) == store.LandingPending {
			return " verify:passed"
		}
	}

	return ""
}

// printVerify prints agent show's verify lines (none when never verified).
func printVerify(p func(k, v string), r *store.InvocationRecord) {
	status := agency.VerifyStatusOf(r)
	if r.VerifySkipped {
		p("verify_status", status+" (landed with --no-verify)")
	} else {
		p("verify_status", status)
	}

	if r.VerifyStatus == "" {
		return
	}
	if r.VerifyStatus == store.VerifyRunning && status == store.VerifyNone {
		p("verify_note", "a verify was interrupted (its land process is gone); land again")
	}

	p("verify_command", r.VerifyCommand)
	p("verify_commit", r.VerifyCommit)
	if r.VerifyHost != "" {
		p("verify_host", r.VerifyHost)
	}

	if r.VerifyExitCode != nil {
		p("verify_exit_code", fmt.Sprint(*r.VerifyExitCode))
	}
	if r.VerifyError != "" {
		p("verify_error", r.VerifyError)
	}
	if r.VerifyDurationMS > 0 {
		p("verify_duration", (time.Duration(r.VerifyDurationMS) * time.Millisecond).String())
	}
	if r.VerifyReusedFrom != "" {
		p("verify_reused_from", r.VerifyReusedFrom)
	}
	if r.VerifiedAsPartOf != "" {
		p("verified_as_part_of", r.VerifiedAsPartOf)
	}

	p("verify_log", r.VerifyLog)

	if r.VerifyRounds > 0 {
		p("verify_rounds", fmt.Sprint(r.VerifyRounds))
	}
}
