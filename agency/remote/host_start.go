package remote

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"os"
	"time"

	"github.com/git-agency/git-agency/agency/internal/core"
	"github.com/git-agency/git-agency/errs"
	"github.com/git-agency/git-agency/host"
	"github.com/git-agency/git-agency/store"
)

// hostStartWithin bounds a start on a host (the sandbox is made there).
const hostStartWithin = 2 * time.Minute

// StartOnHost is `agent start --host NAME`: the integration HEAD goes to
// the host's mirror of this repository (only what it lacks, by git push
// over the host's connection), the host's git-agency makes the sandbox and
// walls and supervises the agent, and a record with the same id and the
// host's name is written here. version is this program's: the host must
// run the same.
func (a *Remote) StartOnHost(ctx context.Context, name, version string, opts core.StartOptions) (*store.InvocationRecord, error) {
	h, _, err := a.hostOf(name)
	if err != nil {
		return nil, err
	}

	wt, err := a.Agency.ResolvePresentWorktree(opts.Worktree)
	if err != nil {
		return nil, err
	}
	if err := a.Agency.CheckOnBranch(ctx, wt); err != nil {
		return nil, err
	}

	base, err := a.Agency.TreeHead(ctx, wt.TreePath)
	if err != nil {
		return nil, core.GitErr(err)
	}
	if base == "" {
		return nil, errs.EmptyIntegrationBranch(wt.Branch)
	}

	if opts.Base != "" {
		base = opts.Base // a continued run: its branch's tip
	}

	hello, err := a.helloFor(ctx, name, version)
	if err != nil {
		return nil, err
	}

	_, hc, _ := a.hostOf(name)
	key, forget, err := a.beginHostStart(ctx, name, wt.WorktreeID, cmp.Or(opts.LineageBase, base))
	if err != nil {
		return nil, err
	}
	done := false
	defer func() { forget(done) }()

	req := HostStartRequest{
		RepoID: a.Store.RepoID, Worktree: wt.Name, Base: base, Config: a.Config.Matching(travels),
		Runner: opts.Runner, Head: !opts.Headless, Prompt: opts.Prompt, Args: opts.RunnerArgs,
		NoUntr: opts.NoIncludeUntracked, Full: opts.Full, Queue: opts.Queue, Version: version,
		MaxActive: hc.MaxActive, LineageBase: opts.LineageBase, StartKey: key,
	}
	in, _ := json.Marshal(req)
	out, err := a.startThere(ctx, h, hello, base, wt.Name, in)
	if err != nil {
		// The host answered and refused: nothing was started there. A
		// link lost on the way leaves the intent for adoption.
		var u *errs.Error
		done = errors.As(err, &u) && u.Code != errs.EHostUnreachable
		return nil, err
	}

	var remote store.InvocationRecord
	if err := json.Unmarshal(out, &remote); err != nil || !store.ValidID(remote.InvocationID) {
		return nil, errs.HostFailed(name, "host-serve start", 0, "unreadable answer: "+string(out))
	}

	rec := localHostRecord(&remote, name, wt, a.Store.RepoID, cmp.Or(opts.LineageBase, base))
	if err := a.writeHostRecord(ctx, rec); err != nil {
		return nil, err
	}
	done = true

	a.Event(rec.InvocationID, "created", map[string]any{"worktree_id": wt.WorktreeID, "runner": rec.Runner, "mode": rec.Mode, "base_commit": base, "host": name})
	return rec, nil
}

// startThere runs the start on the host, pushing the base first when its
// mirror lacks it.
func (a *Remote) startThere(ctx context.Context, h *host.Host, hello *HostHello, base, worktree string, in []byte) ([]byte, error) {
	sctx, cancel := context.WithTimeout(ctx, hostStartWithin)
	defer cancel()
	out, err := a.hostStart(sctx, h, in)
	if errors.Is(err, errNeedBase) {
		if perr := a.Repo.PushOver(sctx, h.SSHCommand(), h.URL(hello.Mirror), "+"+base+":refs/heads/"+hostBaseBranch(worktree)); perr != nil {
			return nil, core.GitErr(perr)
		}
		out, err = a.hostStart(sctx, h, in)
	}
	return out, err
}

// errNeedBase: the host's mirror lacks the base commit.
var errNeedBase = errors.New("need base")

// hostStart runs `host-serve start` once.
func (a *Remote) hostStart(ctx context.Context, h *host.Host, in []byte) ([]byte, error) {
	res, err := h.Run(ctx, host.RemoteProgram("host-serve", "start"), in)
	if err != nil {
		st := a.noteHost(h.Name, nil, err)
		return nil, errs.HostStartLost(h.Name, st.Since, err.Error())
	}

	switch res.ExitCode {
	case 0:
		return res.Stdout, nil
	case ExitNeedBase:
		return nil, errNeedBase
	}

	return nil, errs.HostFailed(h.Name, "host-serve start", res.ExitCode, string(res.Stderr))
}

// helloFor is the host's answer about itself, from the cache when it
// knows the mirror and this version, else asked; another version is
// refused.
func (a *Remote) helloFor(ctx context.Context, name, version string) (*HostHello, error) {
	st := a.hostStateOf(name)
	hello := st.Hello
	if hello == nil || hello.Mirror == "" || hello.Version != version || !st.Reachable {
		var err error
		if hello, err = a.helloWithin(ctx, name, hostStartWithin); err != nil {
			var u *host.ErrUnreachable
			if errors.As(err, &u) {
				st := a.hostStateOf(name)
				return nil, errs.HostUnreachable(name, st.Since, u.Stderr)
			}
			return nil, err
		}
	}

	if hello.Version != version {
		return nil, errs.HostVersion(name, HostText(hello.Version), version)
	}

	return hello, nil
}

// localHostRecord is the local record of an invocation on a host: the
// host's, with the local worktree and repository, no local process and no
// local tree.
//
// The host names only its run: the branch is the id's, the base commit
// the one this side sent (base), and its text shows without control
// characters (a hostile host's answer could name a branch of this
// repository, or write escapes to the terminal).
func localHostRecord(remote *store.InvocationRecord, name string, wt *store.WorktreeRecord, repoID, base string) *store.InvocationRecord {
	r := *hostOutcome(remote)
	r.SandboxBranch = store.SandboxBranch(r.InvocationID)
	r.BaseCommit = base
	r.Runner, r.Mode = HostText(r.Runner), HostText(r.Mode)
	for i := range r.Command {
		r.Command[i] = HostText(r.Command[i])
	}
	r.Host = name
	r.IntegrationWorktreeID = wt.WorktreeID
	r.RepoID = repoID
	r.SandboxPath = ""
	r.PID, r.PIDStartTime, r.SupervisorPID, r.SupervisorStartTime = nil, nil, nil, nil
	r.PromptPath = ""
	return &r
}

// writeHostRecord writes a new host record under the lock.
func (a *Remote) writeHostRecord(ctx context.Context, rec *store.InvocationRecord) error {
	_, unlock, err := a.LockWork(ctx)
	if err != nil {
		return err
	}
	defer unlock()

	if err := os.MkdirAll(a.Store.InvocationDir(rec.InvocationID), 0o700); err != nil {
		return errs.IO("create", a.Store.InvocationDir(rec.InvocationID), err)
	}

	return a.Store.WriteNewInvocationThen(rec, func() error { return nil })
}
