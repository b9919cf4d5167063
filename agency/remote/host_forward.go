package remote

import (
	"context"
	"os"
	"path/filepath"

	"github.com/git-agency/git-agency/agency/internal/core"
	"github.com/git-agency/git-agency/errs"
	"github.com/git-agency/git-agency/host"
	"github.com/git-agency/git-agency/internal/subproc"
	"github.com/git-agency/git-agency/store"
)

// This file holds the commands of an invocation on a host that act there
// beyond a plain forward: a follow-up prompt, attaching to its terminal,
// and continuing it elsewhere.

// SendOnHost gives the invocation rec, which runs on a host, a follow-up
// prompt there (`agent send` in the host's mirror: the host resumes the
// agent, its work comes back as refs). The record here is reopened first,
// so that views ask the host again; a refusal there is caught up by the
// sync that follows. Without detached the host follows the new turn and
// its output streams here. It returns the remote command's exit status.
func (a *Remote) SendOnHost(ctx context.Context, rec *store.InvocationRecord, prompt string, detached bool, run HostRun) (int, error) {
	if rec.Active() {
		// The host may have ended the turn before its fetcher caught the
		// record up here: a send acts, so it asks the host now.
		a.syncHost(ctx, rec.Host, []string{rec.InvocationID})
		if cur, err := a.Store.ReadInvocation(rec.InvocationID); err == nil {
			rec = cur
		}
	}

	// What only this side knows (landing is here), and what it can tell
	// without asking the host.
	switch {
	case store.Deref(rec.LandingStatus) == store.LandingLanded:
		return 0, errs.SendClosed(rec.InvocationID, errs.EAlreadyLanded, "landed")
	case store.Deref(rec.LandingStatus) == store.LandingDiscarded:
		return 0, errs.SendClosed(rec.InvocationID, errs.EDiscarded, "discarded")
	case rec.Status == store.StatusQueued:
		return 0, errs.SendQueued(rec.InvocationID)
	case rec.Active() && rec.Mode == store.ModeHeadless:
		return 0, errs.SendBusy(rec.InvocationID)
	}

	if _, _, err := a.hostMirror(ctx, rec.Host); err != nil {
		return 0, err
	}
	if err := a.reopenHostRecord(ctx, rec.InvocationID); err != nil {
		return 0, err
	}

	args := []string{"agent", "send", rec.InvocationID, "--prompt=" + prompt}
	if detached {
		args = append(args, "--detached")
	}

	run.Long = !detached
	return a.OnHost(ctx, rec, run, args...)
}

// reopenHostRecord marks a host invocation running again here (a new turn
// there): its end is no longer known, so the next view asks the host.
func (a *Remote) reopenHostRecord(ctx context.Context, id string) error {
	_, unlock, err := a.LockWork(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	cur, err := a.Store.ReadInvocation(id)
	if err != nil {
		return err
	}
	if cur.Active() {
		return nil
	}

	// The end it had: should the host refuse the prompt, catching up
	// that same end again is no new event to notify.
	if err := store.WriteFileAtomic(filepath.Join(a.Store.InvocationDir(id), hostReopened), []byte(store.Deref(cur.FinishedAt)), 0o600); err != nil {
		return errs.IO("write", filepath.Join(a.Store.InvocationDir(id), hostReopened), err)
	}

	cur.Status, cur.FinishedAt, cur.ExitReason, cur.ExitCode = store.StatusRunning, nil, nil, nil
	if err := a.Store.WriteInvocation(cur); err != nil {
		return err
	}
	if err := os.Remove(filepath.Join(a.Store.InvocationDir(id), "host-final")); err != nil && !os.IsNotExist(err) {
		return errs.IO("remove", filepath.Join(a.Store.InvocationDir(id), "host-final"), err)
	}

	// What the host last said of it is its old end: views ask again.
	c := a.readHostAgents(cur.Host)
	if _, ok := c.Agents[id]; ok {
		delete(c.Agents, id)
		_ = store.WriteJSONCache(a.hostAgentsPath(cur.Host), c)
	}

	a.Event(id, "host_send", map[string]any{"host": cur.Host})
	return nil
}

// hostReopened is the file of a reopened host record holding the end it
// had before (reopenHostRecord).
const hostReopened = "host-reopened"

// sameEnd: the end the host reports for the invocation in dir is the one
// it had before it was reopened for a prompt the host then refused. The
// mark is used up.
func sameEnd(dir string, remote *store.InvocationRecord) bool {
	p := filepath.Join(dir, hostReopened)
	b, err := os.ReadFile(p)
	if err != nil {
		return false
	}
	_ = os.Remove(p)
	return string(b) != "" && string(b) == store.Deref(remote.FinishedAt)
}

// HostAttachCmd is the command that attaches this terminal to a headed
// invocation on a host: `ssh -t` over the host's connection, running the
// host's `git-agency agent attach` (tmux attaches there).
func (a *Remote) HostAttachCmd(ctx context.Context, rec *store.InvocationRecord) (*subproc.Terminal, error) {
	if rec.Mode != store.ModeHeaded {
		return nil, errs.New(errs.ENotHeaded, "see its output with 'git agency agent logs "+rec.InvocationID+" --follow'",
			"invocation %s is headless: there is no terminal to attach to", rec.InvocationID)
	}

	h, mirror, err := a.hostMirror(ctx, rec.Host)
	if err != nil {
		return nil, err
	}

	t, err := h.Terminal(host.RemoteProgram("--repo", mirror, "agent", "attach", rec.InvocationID))
	if err != nil {
		return nil, errs.HostBadDest(rec.Host, h.Dest)
	}

	return t, nil
}

// AfterHostAttach syncs a host invocation once its terminal was left (an
// act: the host's fetcher runs too).
func (a *Remote) AfterHostAttach(ctx context.Context, rec *store.InvocationRecord) *store.InvocationRecord {
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), hostActWithin)
	defer cancel()
	a.syncHostWithin(sctx, rec.Host, []string{rec.InvocationID}, hostActWithin)
	a.EnsureHostFetcher(rec.Host)
	if cur, err := a.Store.ReadInvocation(rec.InvocationID); err == nil {
		return cur
	}

	return rec
}

// ContinueOptions are the inputs of `agent send ID --host OTHER`.
type ContinueOptions struct {
	// From is the invocation continued (its host gone or its run ended).
	From string
	// Host is where the new run goes ("" or "local": this machine).
	Host    string
	Prompt  string
	Version string
}

// ContinueElsewhere is `agent send ID --host OTHER`: a new invocation, on
// OTHER (or here), in the same worktree with the same runner and mode,
// whose sandbox starts from ID's last fetched sandbox branch and whose
// work counts from ID's base, so that landing it carries ID's commits too.
// The conversation stays with ID's host; the prompt starts a new one. ID
// itself is left as it is (discard it once the new run is landed).
func (a *Remote) ContinueElsewhere(ctx context.Context, opts ContinueOptions) (*store.InvocationRecord, error) {
	old, err := a.Agency.ResolveInvocation(opts.From)
	if err != nil {
		return nil, err
	}
	if old.Host == "" && old.Active() {
		return nil, errs.SendBusy(old.InvocationID)
	}

	switch store.Deref(old.LandingStatus) {
	case store.LandingLanded:
		return nil, errs.SendClosed(old.InvocationID, errs.EAlreadyLanded, "landed")
	case store.LandingDiscarded:
		return nil, errs.SendClosed(old.InvocationID, errs.EDiscarded, "discarded")
	}

	if old.Host != "" && old.Active() {
		// Its host may still run it: only one that does not answer (gone
		// away, or lost) is continued while its record says running.
		a.syncHost(ctx, old.Host, []string{old.InvocationID})
		if cur, err := a.Store.ReadInvocation(old.InvocationID); err == nil {
			old = cur
		}

		if old.Active() && a.hostStateOf(old.Host).Reachable {
			return nil, errs.SendBusy(old.InvocationID)
		}
	}

	tip, err := a.Repo.RevParse(ctx, "refs/heads/"+old.SandboxBranch)
	if err != nil {
		return nil, core.SandboxBranchMissingErr(old)
	}

	start := core.StartOptions{Worktree: old.IntegrationWorktreeID, Runner: old.Runner, Headless: old.Mode == store.ModeHeadless,
		Prompt: opts.Prompt, PromptSource: "flag", RunnerArgs: old.RunnerArgs, Base: tip, LineageBase: old.BaseCommit}
	var rec *store.InvocationRecord
	if opts.Host == "" || opts.Host == "local" {
		rec, err = a.Agency.StartInvocation(ctx, start)
	} else {
		rec, err = a.StartOnHost(ctx, opts.Host, opts.Version, start)
	}

	if err != nil {
		return nil, err
	}

	a.Event(old.InvocationID, "continued", map[string]any{"invocation_id": rec.InvocationID, "host": opts.Host})
	a.Event(rec.InvocationID, "continues", map[string]any{"invocation_id": old.InvocationID, "from_host": old.Host, "base_commit": tip})
	return rec, nil
}
