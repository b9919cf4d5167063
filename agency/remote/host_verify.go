package remote

import (
	"context"
	"encoding/json"
	"hash/fnv"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/git-agency/git-agency/agency/internal/core"
	"github.com/git-agency/git-agency/errs"
	"github.com/git-agency/git-agency/host"
	"github.com/git-agency/git-agency/runner"
	"github.com/git-agency/git-agency/store"
)

// Remote checks (agency.verify.hosts): a verified land may run its
// candidate's check on a host. The check is deterministic and needs no
// model credentials: the candidate commit is pushed to the host's mirror
// (only what it lacks), the host's git-agency checks it out in a verify
// tree of its own, runs the setup and the check there (in the wall when
// agency.isolate walls agents) and answers with the outcome and the log.
// The hosts are tried in turn, starting at one picked by the invocation's
// id (so `land --batch` spreads its checks); a check lost with its host is
// run on the next one, and here at worst.

// verifyHostsKey lists the hosts verified landing may run checks on.
const verifyHostsKey = "agency.verify.hosts"

// VerifyHosts are the hosts of agency.verify.hosts (multi-valued, or
// separated by commas or spaces).
func (a *Remote) VerifyHosts() []string {
	var out []string
	for _, v := range a.Config.GetAll(verifyHostsKey) {
		out = append(out, strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == ' ' })...)
	}
	return out
}

// HostVerifyRequest is what `host-serve verify` reads on its stdin.
type HostVerifyRequest struct {
	RepoID  string              `json:"repo_id"`
	Inv     string              `json:"invocation_id"`
	Commit  string              `json:"commit"`
	Command string              `json:"command"`
	Timeout time.Duration       `json:"timeout"`
	Config  map[string][]string `json:"config"`
}

// HostVerifyAnswer is its answer: the outcome and the log.
type HostVerifyAnswer struct {
	Outcome runner.VerifyOutcome `json:"outcome"`
	Log     string               `json:"log"`
}

// VerifyOnHosts runs inv's check of commit on the first host of
// agency.verify.hosts that answers, trying them in turn from the first-th
// (-1: one picked by inv's id, so that lands spread); the host it ran on,
// or false when none is set or none did (the caller runs it here). A check
// lost with its host (the connection dropped before the answer) is run on
// the next one: a check is deterministic, so running it again is safe.
func (a *Remote) VerifyOnHosts(ctx context.Context, inv, commit, command string, timeout time.Duration, first int) (runner.VerifyOutcome, string, bool) {
	hosts := a.VerifyHosts()
	if len(hosts) == 0 {
		return runner.VerifyOutcome{}, "", false
	}

	if first < 0 {
		sum := fnv.New32a()
		sum.Write([]byte(inv))
		first = int(sum.Sum32() % uint32(len(hosts)))
	}
	for i := range hosts {
		name := hosts[(first+i)%len(hosts)]
		out, err := a.verifyOnHost(ctx, name, inv, commit, command, timeout)
		if err == nil {
			return out, name, true
		}

		a.Warning(inv, errs.HostVerifyLost(name, errs.As(err).Msg))
		a.Event(inv, "verify_host_lost", map[string]any{"host": name, "candidate": commit, "error": errs.As(err).Msg})
		if ctx.Err() != nil {
			break // interrupted here: the check runs nowhere else
		}
	}

	return runner.VerifyOutcome{}, "", false
}

// verifyOnHost runs inv's check of commit on host name.
func (a *Remote) verifyOnHost(ctx context.Context, name, inv, commit, command string, timeout time.Duration) (runner.VerifyOutcome, error) {
	h, _, err := a.hostOf(name)
	if err != nil {
		return runner.VerifyOutcome{}, err
	}

	hello, err := a.helloWithin(ctx, name, hostStartWithin)
	if err != nil {
		return runner.VerifyOutcome{}, err
	}

	ref := "refs/agency/verify/" + inv
	if err := a.Repo.PushOver(ctx, h.SSHCommand(), h.URL(hello.Mirror), "+"+commit+":"+ref); err != nil {
		return runner.VerifyOutcome{}, core.GitErr(err)
	}

	in, _ := json.Marshal(HostVerifyRequest{RepoID: a.Store.RepoID, Inv: inv, Commit: commit,
		Command: command, Timeout: timeout, Config: a.Config.Matching(travels)})
	vctx, cancel := context.WithTimeout(ctx, timeout+hostStartWithin)
	defer cancel()
	res, err := h.Run(vctx, host.RemoteProgram("host-serve", "verify"), in)
	if err != nil {
		return runner.VerifyOutcome{}, err
	}

	var ans HostVerifyAnswer
	if res.ExitCode != 0 || json.Unmarshal(res.Stdout, &ans) != nil {
		return runner.VerifyOutcome{}, errs.HostFailed(name, "host-serve verify", res.ExitCode, string(res.Stderr))
	}

	logPath := a.Store.VerifyLogPath(inv)
	_ = os.WriteFile(logPath, []byte(errs.HostVerifyHeader(name)+"\n"+ans.Log), 0o600)
	return ans.Outcome, nil
}

// ServeVerify is `host-serve verify`: a caller's candidate checked here,
// in a verify tree of this machine's mirror, removed after.
func ServeVerify(ctx context.Context, open Opener, in []byte) (*HostVerifyAnswer, error) {
	var req HostVerifyRequest
	if err := json.Unmarshal(in, &req); err != nil || !store.ValidID(req.Inv) {
		return nil, errs.New(errs.EUsage, "", "host-serve verify: a bad request")
	}

	mirror, err := servedMirror(ctx, req.RepoID)
	if err != nil {
		return nil, err
	}

	a, err := open(ctx, mirror)
	if err != nil {
		return nil, err
	}
	if err := a.mirrorConfig(ctx, req.Config); err != nil {
		return nil, err
	}
	if a, err = open(ctx, mirror); err != nil {
		return nil, err
	}
	if err := a.Agency.RemoveVerifyTree(ctx, req.Inv); err != nil {
		return nil, err
	}

	dir, tree := a.Store.VerifyDir(req.Inv), a.Store.VerifyTreePath(req.Inv)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, errs.IO("create", dir, err)
	}
	owner := filepath.Join(dir, "serve.pid")
	me := strconv.Itoa(os.Getpid())
	if err := os.WriteFile(owner, []byte(me), 0o600); err != nil {
		return nil, errs.IO("write", owner, err)
	}
	defer a.removeOwnVerifyTree(context.WithoutCancel(ctx), req.Inv, owner, me)
	if _, err := a.Agency.AddTree(ctx, a.Repo.Toplevel, tree, "", req.Commit, true); err != nil {
		return nil, err
	}

	rec := &store.InvocationRecord{InvocationID: req.Inv, RepoID: a.Store.RepoID, SandboxPath: tree}
	logPath := filepath.Join(dir, "verify.log")
	spec := runner.VerifySpec{Dir: tree, Setup: a.Agency.VerifySetup(ctx, tree), Command: req.Command, Timeout: req.Timeout, LogPath: logPath,
		Env: append([]string{"AGENCY_INVOCATION_ID=" + req.Inv, "AGENCY_VERIFY_TREE=" + tree}, runner.SetupEnv(a.Repo.Toplevel, tree)...)}
	if spec.Argv, err = a.Agency.VerifyWall(ctx, rec, tree); err != nil {
		return &HostVerifyAnswer{Outcome: runner.VerifyOutcome{Status: store.VerifyErrored, Error: "the wall could not be made: " + errs.As(err).Msg}}, nil
	}

	out := runner.RunVerify(ctx, spec)
	b, _ := os.ReadFile(logPath)
	return &HostVerifyAnswer{Outcome: out, Log: string(b)}, nil
}

// removeOwnVerifyTree removes inv's verify tree on this host when this
// `host-serve verify` still owns it. A check lost with its connection may
// be run again in the same mirror (two host names of one machine) while
// the lost one still runs: the new one replaced its tree and owns it now.
func (a *Remote) removeOwnVerifyTree(ctx context.Context, inv, owner, me string) {
	if b, err := os.ReadFile(owner); err != nil || string(b) != me {
		return
	}
	_ = a.Agency.RemoveVerifyTree(ctx, inv)
}
