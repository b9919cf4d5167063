package errs

import (
	"fmt"
	"strings"
)

// HostUnknown: no agency.host.<name>.ssh.
func HostUnknown(name string, known []string) *Error {
	hint := "add it: git config agency.host." + name + ".ssh <user@machine or ~/.ssh/config alias>"
	if len(known) > 0 {
		hint += "; the configured hosts are: " + strings.Join(known, ", ")
	}
	return New(EHost, hint, "no host named %q (agency.host.%s.ssh is not set)", name, name)
}

// HostBadName: a host name that could not name its files here.
func HostBadName(name string) *Error {
	return New(EHost, "rename it: git config --rename-section 'agency.host."+name+"' agency.host.<name>, a name of letters, digits, '.', '_' and '-'",
		"host name %q: a host's name is letters, digits, '.', '_' and '-', not beginning with '.' or '-'", name)
}

// HostBadDest: a destination ssh would read as an option.
func HostBadDest(name, dest string) *Error {
	return New(EHost, "set agency.host."+name+".ssh to user@machine or an alias of ~/.ssh/config (put options such as a port there)",
		"agency.host.%s.ssh=%q: a destination may not begin with '-' or hold spaces", name, dest)
}

// HostNoAgency: the host has no git-agency to run.
func HostNoAgency(name string) *Error {
	return New(EHostVersion, "copy this build there: git agency host install "+name, "host %s has no git-agency (neither ~/.local/bin/git-agency nor one on its PATH)", name)
}

// HostFailed: the host's git-agency failed.
func HostFailed(name, what string, code int, stderr string) *Error {
	// The host's own words, without its terminal escapes.
	msg := strings.Map(func(r rune) rune {
		if r != '\n' && r != '\t' && (r < ' ' || r == 0x7f || (r >= 0x80 && r < 0xa0)) {
			return '?'
		}
		return r
	}, strings.TrimSpace(stderr))
	return New(EHost, "'git agency host check "+name+"' checks the host",
		"host %s: git-agency %s failed (exit %d): %s", name, what, code, msg)
}

// HostVersion: the two sides run different versions.
func HostVersion(name, there, here string) *Error {
	return New(EHostVersion, "copy this build to the host: git agency host install "+name,
		"host %s runs git-agency %s, this one is %s: a start needs the same version on both sides", name, there, here)
}

// HostUnreachable: ssh failed.
func HostUnreachable(name, since, why string) *Error {
	why = strings.TrimSpace(why)
	msg := fmt.Sprintf("host %s is unreachable", name)
	if since != "" {
		msg += " since " + since
	}
	if why != "" {
		msg += ": " + why
	}
	return New(EHostUnreachable, "check that 'ssh' to it works without a prompt, then 'git agency host check "+name+"'", "%s", msg)
}

// HostInstallMismatch: host install to another OS or architecture.
func HostInstallMismatch(name, there, here string) *Error {
	return New(EHost, "build git-agency for "+there+" (GOOS/GOARCH) and copy it to ~/.local/bin/git-agency there yourself",
		"host %s is %s, this build is %s: host install copies only to the same OS and architecture", name, there, here)
}

// HostLostNote is the error recorded in a run whose host did not answer
// for its lostAfter: the run is ended here, its last fetched work landable.
func HostLostNote(name string, lostAfter string) string {
	return fmt.Sprintf("host lost: %s has not answered for %s (agency.host.%s.lostAfter); what was last fetched of this run can land", name, lostAfter, name)
}

// HostVerifyLost: a check could not run on a verify host (agency.verify.hosts);
// it runs on the next one, or here.
func HostVerifyLost(name, why string) error {
	return New(EHostUnreachable, "it runs on the next host of agency.verify.hosts, or here", "the check could not run on host %s: %s", name, why)
}

// HostVerifyHeader is the first line of the verify log of a check a host ran.
func HostVerifyHeader(name string) string {
	return "# this check ran on host " + name
}

// HostStartLost: the connection failed during `agent start --host`: the
// host may have started the agent; its record is written here later.
func HostStartLost(name, since, why string) *Error {
	e := HostUnreachable(name, since, why)
	e.Msg += " (the start may have reached it: an agent it started is recorded here by the next start on " + name + " or by gc)"
	e.Hint = "check that 'ssh' to it works without a prompt, then 'git agency host check " + name + "'; 'git agency doctor' lists a start left unrecorded, 'git agency gc --yes' records its agent"
	return e
}

// HostStartsInterrupted is doctor's finding of starts on host name killed
// before their record was written here.
func HostStartsInterrupted(name string, n int) (msg, hint string) {
	return fmt.Sprintf("%d start(s) on host %s ended before their record was written here: an agent may run there unrecorded", n, name),
		"git agency gc --yes asks " + name + " and records those agents here (a start on " + name + " does too)"
}

// HostDiscarded is the report of a discard of an agent on a host.
func HostDiscarded(id, name, branch string) []string {
	return []string{
		"discarded " + id + " on host " + name + ": its agent stopped and its sandbox removed there",
		"its fetched branch " + branch + " and checkpoint refs stay here until gc; 'git agency undo' does not undo a discard on a host",
	}
}

// HostForgotNote is the error recorded in a run its host, which answers,
// no longer knows (its data there was removed): the run is ended here.
func HostForgotNote(name string) string {
	return fmt.Sprintf("host %s answers but no longer has this run (its data there was removed); what was last fetched of it can land", name)
}

// HostObjectsRefused: git refused the objects a run's refs on a host bring
// (fetch.fsckObjects); what was fetched of it before stays.
func HostObjectsRefused(id, name, why string) *Error {
	return New(EHost, "what was fetched of it before stays here ('git agency agent diff "+id+"' shows it); 'git agency agent discard "+id+"' removes the run there",
		"the objects of %s on host %s were refused (git's check of what a host sends): %s", id, name, strings.TrimSpace(why))
}
