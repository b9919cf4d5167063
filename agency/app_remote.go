package agency

import (
	"context"
	"io"
	"time"

	"github.com/git-agency/git-agency/agency/remote"
	"github.com/git-agency/git-agency/gitcore"
	"github.com/git-agency/git-agency/internal/subproc"
	"github.com/git-agency/git-agency/runner"
	"github.com/git-agency/git-agency/store"
)

// The host side (agents on other machines) lives in package remote; these
// are its names as agency's callers (cli, watch) know them.
type (
	// HostRun is how a command forwarded to a host runs.
	HostRun = remote.HostRun
	// HostRow is one line of `host ls`.
	HostRow = remote.HostRow
	// ContinueOptions are the inputs of `agent send ID --host OTHER`.
	ContinueOptions = remote.ContinueOptions
)

// ExitNeedBase is host-serve start's exit status when the mirror lacks the
// base commit (remote.ExitNeedBase).
const ExitNeedBase = remote.ExitNeedBase

// ErrNeedBase is ServeStart's answer when the base must be pushed first
// (remote.ErrNeedBase).
var ErrNeedBase = remote.ErrNeedBase

// remote is the host side for one call: a's core as it is now, a as its
// host, and what the hosts answered a's views.
func (a *App) remote() *remote.Remote {
	return &remote.Remote{Core: a.core(), Agency: remoteHost{a}, Looks: &a.hostLooks}
}

// openRemote opens the App of the repository at dir as a Remote: what
// host-serve answers in (remote.Opener).
func openRemote(ctx context.Context, dir string) (*remote.Remote, error) {
	a, err := Open(ctx, dir, nil)
	if err != nil {
		return nil, err
	}

	return a.remote(), nil
}

// HostText is s from a host's answer, its control characters each shown
// as '?' (remote.HostText).
func HostText(s string) string { return remote.HostText(s) }

// ServeHello is `host-serve hello` (remote.ServeHello).
func ServeHello(ctx context.Context, version, repoID string) (*remote.HostHello, error) {
	return remote.ServeHello(ctx, version, repoID)
}

// ServeStart is `host-serve start` (remote.ServeStart).
func ServeStart(ctx context.Context, version string, in []byte) (*store.InvocationRecord, error) {
	return remote.ServeStart(ctx, openRemote, version, in)
}

// ServeStatus is `host-serve status` (remote.ServeStatus).
func ServeStatus(ctx context.Context, repoID string, ids, startKeys []string) (map[string]remote.HostAgent, error) {
	return remote.ServeStatus(ctx, openRemote, repoID, ids, startKeys)
}

// ServeWait is `host-serve wait` (remote.ServeWait).
func ServeWait(ctx context.Context, repoID, sig string, within time.Duration, ids []string) (*remote.HostWaitAnswer, error) {
	return remote.ServeWait(ctx, openRemote, repoID, sig, within, ids)
}

// ServeApply is `host-serve apply` (remote.ServeApply).
func ServeApply(ctx context.Context, repoID, id string) (*remote.HostApply, error) {
	return remote.ServeApply(ctx, openRemote, repoID, id)
}

// ServeVerify is `host-serve verify` (remote.ServeVerify).
func ServeVerify(ctx context.Context, in []byte) (*remote.HostVerifyAnswer, error) {
	return remote.ServeVerify(ctx, openRemote, in)
}

// DefaultHost is the host a start on worktree goes to without --host
// (remote.Remote.DefaultHost).
func (a *App) DefaultHost(worktreeName string) string { return a.remote().DefaultHost(worktreeName) }

// ListHosts asks every host at once; a read (remote.Remote.ListHosts).
func (a *App) ListHosts(ctx context.Context) ([]HostRow, error) { return a.remote().ListHosts(ctx) }

// Hello asks a host's git-agency about itself (remote.Remote.Hello).
func (a *App) Hello(ctx context.Context, name string) (*remote.HostHello, error) {
	return a.remote().Hello(ctx, name)
}

// CheckHost is `host check NAME` (remote.Remote.CheckHost).
func (a *App) CheckHost(ctx context.Context, name, version string) ([]remote.HostCheck, error) {
	return a.remote().CheckHost(ctx, name, version)
}

// InstallOnHost is `host install NAME` (remote.Remote.InstallOnHost).
func (a *App) InstallOnHost(ctx context.Context, name, version string) (string, error) {
	return a.remote().InstallOnHost(ctx, name, version)
}

// StartOnHost is `agent start --host NAME` (remote.Remote.StartOnHost).
func (a *App) StartOnHost(ctx context.Context, name, version string, opts StartOptions) (*store.InvocationRecord, error) {
	return a.remote().StartOnHost(ctx, name, version, opts)
}

// InterruptedHostStarts are, by host, the keys of starts whose process
// ended before it wrote the record here (remote.Remote.InterruptedHostStarts).
func (a *App) InterruptedHostStarts() map[string][]string { return a.remote().InterruptedHostStarts() }

// AdoptHostStarts records here the agents a host started for interrupted
// starts, and forgets those intents
// (remote.Remote.AdoptHostStarts).
func (a *App) AdoptHostStarts(ctx context.Context, name string) ([]string, error) {
	return a.remote().AdoptHostStarts(ctx, name)
}

// ActOnHost runs a command on the invocation's host, then syncs it
// (remote.Remote.ActOnHost).
func (a *App) ActOnHost(ctx context.Context, rec *store.InvocationRecord, stdout, stderr io.Writer, args ...string) (int, error) {
	return a.remote().ActOnHost(ctx, rec, stdout, stderr, args...)
}

// OnHost runs a command on the invocation's host, as run says
// (remote.Remote.OnHost).
func (a *App) OnHost(ctx context.Context, rec *store.InvocationRecord, run HostRun, args ...string) (int, error) {
	return a.remote().OnHost(ctx, rec, run, args...)
}

// DiscardHostRecord marks a host invocation discarded here once its host
// discarded it
// (remote.Remote.DiscardHostRecord).
func (a *App) DiscardHostRecord(ctx context.Context, id string) (*store.InvocationRecord, error) {
	return a.remote().DiscardHostRecord(ctx, id)
}

// CatchUpHosts brings the runs of hosts among queries up to date
// (remote.Remote.CatchUpHosts).
func (a *App) CatchUpHosts(ctx context.Context, queries []string) {
	a.remote().CatchUpHosts(ctx, queries)
}

// HostApplyAll fetches the commit of the uncommitted work of each of ids
// that runs on a host
// (remote.Remote.HostApplyAll).
func (a *App) HostApplyAll(ctx context.Context, ids []string) error {
	return a.remote().HostApplyAll(ctx, ids)
}

// FetchedCheckpoints are the checkpoints of an invocation on a host as
// fetched here
// (remote.Remote.FetchedCheckpoints).
func (a *App) FetchedCheckpoints(ctx context.Context, rec *store.InvocationRecord) ([]store.Checkpoint, error) {
	return a.remote().FetchedCheckpoints(ctx, rec)
}

// EnsureHostFetchers starts a fetcher for every host with invocations
// whose end or refs are not here yet, unless one runs
// (remote.Remote.EnsureHostFetchers).
func (a *App) EnsureHostFetchers() { a.remote().EnsureHostFetchers() }

// EnsureHostFetcher starts the host's fetcher unless one runs
// (remote.Remote.EnsureHostFetcher).
func (a *App) EnsureHostFetcher(name string) { a.remote().EnsureHostFetcher(name) }

// RunHostFetcher is the fetcher of host name (`host-fetch NAME`)
// (remote.Remote.RunHostFetcher).
func (a *App) RunHostFetcher(ctx context.Context, name string) error {
	return a.remote().RunHostFetcher(ctx, name)
}

// SendOnHost sends a prompt to an invocation on a host (remote.Remote.SendOnHost).
func (a *App) SendOnHost(ctx context.Context, rec *store.InvocationRecord, prompt string, detached bool, run HostRun) (int, error) {
	return a.remote().SendOnHost(ctx, rec, prompt, detached, run)
}

// HostAttachCmd is the command that attaches this terminal to a headed
// invocation on a host
// (remote.Remote.HostAttachCmd).
func (a *App) HostAttachCmd(ctx context.Context, rec *store.InvocationRecord) (*subproc.Terminal, error) {
	return a.remote().HostAttachCmd(ctx, rec)
}

// AfterHostAttach syncs a host invocation once its terminal was left
// (remote.Remote.AfterHostAttach).
func (a *App) AfterHostAttach(ctx context.Context, rec *store.InvocationRecord) *store.InvocationRecord {
	return a.remote().AfterHostAttach(ctx, rec)
}

// ContinueElsewhere is `agent send ID --host OTHER` (remote.Remote.ContinueElsewhere).
func (a *App) ContinueElsewhere(ctx context.Context, opts ContinueOptions) (*store.InvocationRecord, error) {
	return a.remote().ContinueElsewhere(ctx, opts)
}

// RecordHosts are the hosts this repository's records name
// (remote.Remote.RecordHosts).
func (a *App) RecordHosts() []string { return a.remote().RecordHosts() }

// GCOnHost runs gc in the host's mirror of this repository
// (remote.Remote.GCOnHost).
func (a *App) GCOnHost(ctx context.Context, name string, opts GCOptions, act bool, olderThan string, run HostRun) (int, error) {
	return a.remote().GCOnHost(ctx, name, opts, act, olderThan, run)
}

// verifyHosts is remote.Remote.VerifyHosts.
func (a *App) verifyHosts() []string { return a.remote().VerifyHosts() }

// verifyOnHosts is remote.Remote.VerifyOnHosts.
func (a *App) verifyOnHosts(ctx context.Context, inv, commit, command string, timeout time.Duration, first int) (runner.VerifyOutcome, string, bool) {
	return a.remote().VerifyOnHosts(ctx, inv, commit, command, timeout, first)
}

// lookAtHosts is remote.Remote.LookAtHosts.
func (a *App) lookAtHosts(ctx context.Context) { a.remote().LookAtHosts(ctx) }

// hostDisplay is remote.Remote.HostDisplay.
func (a *App) hostDisplay(v *InvocationView) { a.remote().HostDisplay(v) }

// hostStartsDir is remote.Remote.HostStartsDir.
func (a *App) hostStartsDir(name string) string { return a.remote().HostStartsDir(name) }

// remoteHost is what the host side asks of the rest of agency
// (remote.Host).
type remoteHost struct{ a *App }

func (h remoteHost) ResolveInvocation(query string) (*store.InvocationRecord, error) {
	return h.a.ResolveInvocation(query)
}

func (h remoteHost) ResolvePresentWorktree(query string) (*store.WorktreeRecord, error) {
	return h.a.ResolvePresentWorktree(query)
}

func (h remoteHost) CheckOnBranch(ctx context.Context, wt *store.WorktreeRecord) error {
	return h.a.CheckOnBranch(ctx, wt)
}

func (h remoteHost) TreeHead(ctx context.Context, tree string) (string, error) {
	return h.a.treeHead(ctx, tree)
}

func (h remoteHost) CreateWorktree(ctx context.Context, name, parent string, full bool) (*store.WorktreeRecord, error) {
	return h.a.CreateWorktree(ctx, CreateWorktreeOptions{Name: name, Parent: parent, Full: full})
}

func (h remoteHost) StartInvocation(ctx context.Context, opts StartOptions) (*store.InvocationRecord, error) {
	return h.a.StartInvocation(ctx, opts)
}

func (h remoteHost) AfterRun(ctx context.Context, inv string) error { return h.a.AfterRun(ctx, inv) }

func (h remoteHost) Statuses(ctx context.Context, ids []string) map[string]*InvocationView {
	return h.a.Statuses(ctx, ids)
}

func (h remoteHost) ShowInvocation(ctx context.Context, query string) (*InvocationView, error) {
	return h.a.ShowInvocation(ctx, query)
}

func (h remoteHost) SnapshotSandbox(ctx context.Context, tree string, exclude []string) (*gitcore.Snapshot, error) {
	return h.a.snapshotSandbox(ctx, tree, exclude)
}

func (h remoteHost) AddTree(ctx context.Context, source, path, branch, start string, full bool) (bool, error) {
	return h.a.addTree(ctx, source, path, branch, start, full)
}

func (h remoteHost) RemoveVerifyTree(ctx context.Context, inv string) error {
	return h.a.removeVerifyTree(ctx, inv)
}

func (h remoteHost) VerifySetup(ctx context.Context, tree string) string {
	return landHost(h).VerifySetup(ctx, tree)
}

func (h remoteHost) VerifyWall(ctx context.Context, rec *store.InvocationRecord, tree string) (func(argv []string, dir string) ([]string, error), error) {
	return h.a.lander().VerifyWall(ctx, rec, tree)
}
