package remote

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unicode"

	"github.com/git-agency/git-agency/agency/internal/core"
	"github.com/git-agency/git-agency/agency/view"
	"github.com/git-agency/git-agency/errs"
	"github.com/git-agency/git-agency/host"
	"github.com/git-agency/git-agency/store"
)

// HostAgent is one invocation as its host shows it (`host-serve status`).
type HostAgent struct {
	Record  *store.InvocationRecord `json:"record"`
	Display string                  `json:"display"`
}

// ServeStatus is `host-serve status`: the host's view of the given
// invocations of the caller's repository (a read, as `agent show`), and
// of those started for one of startKeys (AdoptHostStarts).
func ServeStatus(ctx context.Context, open Opener, repoID string, ids, startKeys []string) (map[string]HostAgent, error) {
	a, err := openServedMirror(ctx, open, repoID)
	if err != nil {
		return nil, err
	}
	if len(startKeys) > 0 {
		ids = append(ids, a.hostStartsByKey(startKeys)...)
	}

	out := map[string]HostAgent{}
	for id, v := range a.Agency.Statuses(ctx, ids) {
		out[id] = HostAgent{Record: v.Record, Display: v.Display}
	}

	return out, nil
}

// hostAgents is the per-repository cache of what each host last said
// (<repo dir>/hosts/<name>.json): views read it, syncs rewrite it.
type hostAgents struct {
	UpdatedAt string               `json:"updated_at"`
	Agents    map[string]HostAgent `json:"agents"`
}

func (a *Remote) hostAgentsPath(name string) string {
	return filepath.Join(a.Store.RepoDir(), "hosts", name+".json")
}

func (a *Remote) readHostAgents(name string) hostAgents {
	var c hostAgents
	if store.ReadJSON(a.hostAgentsPath(name), &c) != nil || c.Agents == nil {
		c.Agents = map[string]HostAgent{}
	}
	return c
}

// hostRecords are this repository's records of invocations on hosts that
// are not landed or discarded, by host.
func (a *Remote) hostRecords() map[string][]*store.InvocationRecord {
	out := map[string][]*store.InvocationRecord{}
	list, err := a.Store.ScanInvocations()
	if err != nil {
		return out
	}

	for _, e := range list {
		r := e.Record
		if r == nil || r.Host == "" || store.Deref(r.LandingStatus) == store.LandingLanded || store.Deref(r.LandingStatus) == store.LandingDiscarded {
			continue
		}
		out[r.Host] = append(out[r.Host], r)
	}

	return out
}

// fetchedFinal: a finished host record whose final refs were fetched.
func (a *Remote) fetchedFinal(r *store.InvocationRecord) bool {
	_, err := os.Stat(filepath.Join(a.Store.InvocationDir(r.InvocationID), "host-final"))
	return err == nil
}

// syncHost asks one host about ids, fetches their refs and catches up the
// records of those that ended: what the fetcher does in a round, for a
// command that acts on them (a stop, a land) and must not wait for it.
func (a *Remote) syncHost(ctx context.Context, name string, ids []string) {
	a.syncHostWithin(ctx, name, ids, hostAnswerWithin)
}

// syncHostWithin is syncHost bounded by within: after an action on the
// host, which reached it anyway, longer than a view waits.
func (a *Remote) syncHostWithin(ctx context.Context, name string, ids []string, within time.Duration) {
	h, _, err := a.hostOf(name)
	if err != nil {
		return
	}

	ctx, cancel := context.WithTimeout(ctx, within)
	defer cancel()
	out, err := a.hostCall(ctx, h, nil, append([]string{"host-serve", "status", "--repo-id", a.Store.RepoID}, ids...)...)
	if err != nil {
		return
	}

	var agents map[string]HostAgent
	if json.Unmarshal(out, &agents) != nil {
		return
	}

	a.noteHost(name, nil, nil)
	if err := a.fetchHostRefs(ctx, h, name, ids); err != nil {
		a.Warning("", err)
		return
	}

	notes := a.writeHostAgents(name, agents)
	notes = append(notes, a.catchUp(ctx, name, agents)...)
	a.notifyHost(ctx, notes)
	a.recordHostForgot(ctx, name, ids, agents)
}

// fetchHostRefs fetches the sandbox branches and checkpoint refs of ids
// from the host's mirror, under their usual names. git checks every object
// it receives (fetch.fsckObjects): a host's objects are an agent's. When a
// branch is missing there (its agent deleted it, the host's data was
// removed), or git refuses what one run's refs bring, the runs are fetched
// one by one: one run must not hold back the host's other runs (what was
// fetched of that one stays here).
func (a *Remote) fetchHostRefs(ctx context.Context, h *host.Host, name string, ids []string) error {
	st := a.hostStateOf(name)
	if st.Hello == nil || st.Hello.Mirror == "" {
		return nil
	}

	url := h.URL(st.Hello.Mirror)
	err := a.Repo.FetchOver(ctx, h.SSHCommand(), url, a.uploadPack(), hostRefspecs(ids...)...)
	if missingRemoteRef(err) || refusedObjects(err) {
		err = a.fetchHostRunsEach(ctx, h, name, url, ids)
	}
	if err != nil {
		return core.GitErr(err)
	}

	return nil
}

// fetchHostRunsEach fetches each of ids alone. A run whose branch is gone
// is passed over; one whose objects git refuses is too, with a warning in
// its log and a host_objects_refused event naming git's reason. Any other
// failure ends the fetch.
func (a *Remote) fetchHostRunsEach(ctx context.Context, h *host.Host, name, url string, ids []string) error {
	for _, id := range ids {
		err := a.Repo.FetchOver(ctx, h.SSHCommand(), url, a.uploadPack(), hostRefspecs(id)...)
		switch {
		case err == nil, missingRemoteRef(err):
		case refusedObjects(err):
			a.Event(id, "host_objects_refused", map[string]any{"host": name, "error": err.Error()})
			a.Warning(id, errs.HostObjectsRefused(id, name, err.Error()))
		default:
			return err
		}
	}

	return nil
}

// hostRefspecs are the refspecs that fetch ids' sandbox branches and
// checkpoint refs under their usual names.
func hostRefspecs(ids ...string) []string {
	var out []string
	for _, id := range ids {
		b := store.SandboxBranch(id)
		out = append(out, "+refs/heads/"+b+":refs/heads/"+b, "+"+store.SnapshotRefPrefix(id)+"*:"+store.SnapshotRefPrefix(id)+"*")
	}
	return out
}

// refusedObjects: git's check of the received objects (fetch.fsckObjects)
// refused them.
func refusedObjects(err error) bool {
	return err != nil && strings.Contains(err.Error(), "fsck error")
}

// missingRemoteRef: a fetch failed because a ref it names is not there.
func missingRemoteRef(err error) bool {
	return err != nil && strings.Contains(err.Error(), "couldn't find remote ref")
}

// recordHostForgot ends the records of those of ids that the host, which
// answered, does not know (its data there was removed): failed, the error
// saying so, so that what was last fetched of them can land, and no
// fetcher waits on them for ever.
func (a *Remote) recordHostForgot(ctx context.Context, name string, ids []string, agents map[string]HostAgent) {
	var gone []string
	for _, id := range ids {
		if _, ok := agents[id]; !ok {
			gone = append(gone, id)
		}
	}
	if len(gone) > 0 {
		a.endHostRuns(ctx, gone, "host_forgot", errs.HostForgotNote(name))
	}
}

// catchUp writes into the local records what the host recorded of the
// invocations that ended (their refs were just fetched), and gives the
// notifications of those ends.
func (a *Remote) catchUp(ctx context.Context, name string, agents map[string]HostAgent) []hostNote {
	var ended []HostAgent
	for id, ag := range agents {
		// A host speaks only of its own runs, each under its own id.
		if ag.Record != nil && ag.Record.InvocationID == id && !ag.Record.Active() {
			ended = append(ended, ag)
		}
	}

	if len(ended) == 0 {
		return nil
	}

	ctx, unlock, err := a.LockWorkWait(ctx, core.ReconcileLockWait)
	if err != nil {
		return nil
	}
	defer unlock()
	var notes []hostNote
	for _, ag := range ended {
		cur, err := a.Store.ReadInvocation(ag.Record.InvocationID)
		if err != nil || cur.Host != name {
			continue
		}

		if cur.FinishedAt == nil {
			up := withHostOutcome(cur, ag.Record)
			if err := a.Store.WriteInvocation(up); err != nil {
				a.Warning(cur.InvocationID, err)
				continue
			}

			a.Event(cur.InvocationID, "host_caught_up", map[string]any{"status": up.Status})
			if !sameEnd(a.Store.InvocationDir(cur.InvocationID), ag.Record) {
				notes = append(notes, endNote(up, ag.Display))
			}
		}

		_ = store.WriteFileAtomic(filepath.Join(a.Store.InvocationDir(cur.InvocationID), "host-final"), []byte(a.Stamp()+"\n"), 0o600)
	}

	_ = ctx
	return notes
}

// HostText is s from a host's answer, its control characters (terminal
// escapes, new lines) each shown as '?'.
func HostText(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return '?'
		}
		return r
	}, s)
}

// hostOutcome is a copy of remote, a record a host sent, whose texts
// shown here are HostText.
func hostOutcome(remote *store.InvocationRecord) *store.InvocationRecord {
	r := *remote
	r.Status, r.SemanticStatus, r.SemanticSummary, r.Error = HostText(r.Status), HostText(r.SemanticStatus), HostText(r.SemanticSummary), HostText(r.Error)
	if r.ExitReason != nil {
		r.ExitReason = store.Str(HostText(*r.ExitReason))
	}
	r.Command = append([]string(nil), r.Command...)
	return &r
}

// withHostOutcome is cur with the host's outcome of the run.
func withHostOutcome(cur, remote *store.InvocationRecord) *store.InvocationRecord {
	remote = hostOutcome(remote)
	up := *cur
	up.Status, up.ExitReason, up.ExitCode, up.FinishedAt = remote.Status, remote.ExitReason, remote.ExitCode, remote.FinishedAt
	// Landing is this side's: the host never lands. A run that ended
	// waits to land here, as a local one (land --all, autoLand read it).
	if up.LandingStatus == nil && !remote.Active() && remote.Status != store.StatusQueued {
		up.LandingStatus = store.Str(store.LandingPending)
	}
	up.LastOutputAt = remote.LastOutputAt
	up.SessionID, up.Usage, up.Turns = remote.SessionID, remote.Usage, remote.Turns
	up.SemanticStatus, up.SemanticSummary, up.Error = remote.SemanticStatus, remote.SemanticSummary, remote.Error
	return &up
}

// HostDisplay sets a host invocation's display from what its host said
// (asked live by this view, else what the fetcher last wrote), or
// `unreachable since T` / `host lost` when it does not answer. A read.
func (a *Remote) HostDisplay(v *view.InvocationView) {
	r := v.Record
	if !r.Active() && !r.Queued() {
		return
	}

	agents, st := a.hostSays(r.Host)
	if !st.Reachable {
		since := unreachableSince(st, a.Stamp())
		v.Display = "unreachable since " + since
		if c, err := a.hostConfigOf(r.Host); err == nil {
			if t, err := time.Parse(time.RFC3339, since); err == nil && a.Now().Sub(t) > c.LostAfter {
				v.Display = displayHostLost
			}
		}

		return
	}

	if ag, ok := agents[r.InvocationID]; ok && ag.Display != "" && ag.Record != nil {
		v.Display = HostText(ag.Display)
		cp := *r
		rr := hostOutcome(ag.Record)
		cp.Status, cp.SemanticStatus, cp.SemanticSummary, cp.LastOutputAt = rr.Status, rr.SemanticStatus, rr.SemanticSummary, rr.LastOutputAt
		cp.ExitReason, cp.ExitCode, cp.FinishedAt, cp.Turns = rr.ExitReason, rr.ExitCode, rr.FinishedAt, rr.Turns
		v.Record = &cp
	}
}

// unreachableSince is when a host that does not answer stopped answering:
// as recorded, else the last time it answered, else now.
func unreachableSince(st HostState, now string) string {
	switch {
	case st.Since != "":
		return st.Since
	case st.LastOK != "":
		return st.LastOK
	}
	return now
}

// displayHostLost: a host that has not answered for agency.host.<name>.lostAfter.
const displayHostLost = "host lost"

// openServedMirror opens the host's mirror of the caller's repository
// repoID (made when missing), as each host-serve answer does.
func openServedMirror(ctx context.Context, open Opener, repoID string) (*Remote, error) {
	mirror, err := servedMirror(ctx, repoID)
	if err != nil {
		return nil, err
	}

	return open(ctx, mirror)
}

// servedMirror is the directory of this machine's mirror of the caller's
// repository repoID, made when it is not there yet.
func servedMirror(ctx context.Context, repoID string) (string, error) {
	dataDir, err := hostDataDir()
	if err != nil {
		return "", err
	}

	return ensureMirror(ctx, dataDir, repoID)
}
