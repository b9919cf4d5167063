package errs

// VerifyFailed: the check failed on the candidate of inv; why is the
// verify's own sentence (exit status, timeout, cannot start).
func VerifyFailed(inv, why, log, tree string) *Error {
	hint := "read the log with 'git agency agent logs --verify " + inv + "'"
	if tree != "" {
		hint += "; the candidate is kept in " + tree + " until the next verify or gc"
	}
	hint += "; fix it in the sandbox ('git agency agent send " + inv + "') and land again, or land with --no-verify"
	return New(EVerifyFailed, hint, "verify of %s failed: %s; nothing was landed", inv, why).With("log: " + log)
}

// VerifyCancelled: the check of inv's candidate was stopped (Ctrl-C, the
// timeout) before it said anything of the work.
func VerifyCancelled(inv, why, log string) *Error {
	return New(EVerifyCancelled, "land again; if the check needs longer, raise agency.verify.timeout",
		"verify of %s was cancelled: %s; nothing was landed", inv, why).With("log: " + log)
}

// VerifyBroken: the check of inv's candidate could not run (not found,
// not executable, no wall): the check is at fault, not the work.
func VerifyBroken(inv, why, command, log string) *Error {
	return New(EVerifyError, "the check itself is broken, not the work: fix agency.verify (now '"+command+"'; 'git config agency.verify'), then land again",
		"verify of %s could not run: %s; nothing was landed", inv, why).With("log: " + log)
}

// VerifyFailedSentBack is a red verify (red, VerifyFailed) of inv whose
// log went back to its agent as round round: it says so, and its hint is
// to wait for that turn, not to send it.
func VerifyFailedSentBack(red *Error, inv string, round int) *Error {
	e := New(EVerifyFailed, "nothing to do: when the agent's turn ends, its work is verified and landed again ('git agency agent show "+inv+"')",
		"%s; sent back to the agent (round %d)", red.Msg, round)
	e.Detail = red.Detail
	return e
}

func VerifyRunning(inv string, pid int) *Error {
	return New(EVerifyRunning, "wait for it to end ('git agency agent show "+inv+"')",
		"invocation %s is being verified by another land (pid %d)", inv, pid)
}

func HeadMoving(inv, branch string, tries int) *Error {
	return New(EHeadMoving, "land again when the branch is quiet; nothing was landed",
		"%s moved during each of %d verifies of %s's candidate", branch, tries, inv)
}

// LandSome: a land of several invocations where not all landed.
func LandSome(landed, total int) *Error {
	return New(ELandSome, "each invocation's line says what happened; fix the ones that did not land and land them again",
		"%d of %d invocations landed", landed, total)
}

func VerifyTimeoutConfig(v string) *Error {
	return Config("agency.verify.timeout", v, "a duration such as 30m")
}

// VerifyNotConfigured: --batch or --send-back without a check to run.
func VerifyNotConfigured(flag string) *Error {
	return New(EUsage, "set one with 'git config agency.verify \"make test\"'",
		"%s needs a check to run, and agency.verify is not set", flag)
}

// VerifyLogMissing: agent logs --verify for an invocation never verified.
func VerifyLogMissing(inv string) *Error {
	return New(ENotFound, "land it with agency.verify set to verify it",
		"invocation %s has no verify log", inv)
}

// Land's command line (agent land X Y Z, --all, --batch).
func LandIDsAndAll() *Error {
	return Usage("give invocation ids or --all, not both", "git agency agent land")
}

func LandWorktreeWithoutAll() *Error {
	return Usage("-w goes with --all", "git agency agent land")
}

func LandCheckOne() *Error {
	return Usage("--check takes one invocation", "git agency agent land")
}

func LandBatchNegative() *Error {
	return Usage("--batch takes a positive number", "git agency agent land")
}

func LandNoIDs() *Error {
	return Usage("name the invocations to land, or --all", "git agency agent land")
}

func NothingReadyToLand() *Error {
	return New(ENothingToLand, "'git agency agent ls' shows what there is", "no finished invocation waits to land")
}

// LandCheckInterrupted: land --check (a read) found a land of inv that was
// interrupted; it does not finish it.
func LandCheckInterrupted(inv string) *Error {
	return New(ELandInterrupted, "'git agency agent land "+inv+"' finishes it, or reports what state the tree is in",
		"a land of %s was interrupted; --check only reads, and does not finish it", inv)
}
