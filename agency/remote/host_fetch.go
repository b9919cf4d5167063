package remote

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/git-agency/git-agency/host"
	"github.com/git-agency/git-agency/runner"
	"github.com/git-agency/git-agency/store"
)

// The fetcher: one background process per repository and host
// (`git-agency host-fetch NAME`, started by the commands that act: a start
// on the host, watch, an action forwarded to it, a land). It is the one
// writer of what the host says: it waits on the host for a change of its
// invocations (a turn end, a checkpoint, the end: `host-serve wait`), at
// most hostWaitWindow, then fetches their sandbox branches and checkpoint
// refs, rewrites the host caches and catches up the records of those that
// ended. So the work comes back at every turn end, checkpoint and finish,
// and at least every minute while connected. Views only read what it last
// wrote, or ask the host live and write nothing.

// hostWaitWindow is the longest a fetcher waits on the host for a change
// before it fetches anyway (the issue asks: at least every 60 s).
const hostWaitWindow = 45 * time.Second

// hostRetryEvery is how often a fetcher tries again a host that does not
// answer.
const hostRetryEvery = time.Second

// fpHostFetchPause, given as "host:fetch-pause=<file>", makes the
// fetcher's git fetch wait on the host, inside its ssh session, while
// <file> exists there (it touches <file>.reached first): the tests kill
// the connection in the middle of a fetch.
const fpHostFetchPause = "host:fetch-pause"

func (a *Remote) fetcherLockPath(name string) string {
	return filepath.Join(a.Store.RepoDir(), "hosts", name+".fetcher")
}

// fetcherAlive reports whether a fetcher of the host runs (it holds its
// lock file); a read: a missing lock file is not made.
func (a *Remote) fetcherAlive(name string) bool { return lockHeld(a.fetcherLockPath(name)) }

// lockHeld reports whether a live process holds the flock of the file at
// path; a read: a missing file is not made, and nobody holds it.
func lockHeld(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		return errors.Is(err, syscall.EWOULDBLOCK)
	}

	_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	return false
}

// EnsureHostFetchers starts a fetcher for every host with invocations of
// this repository whose end or refs are not here yet, unless one runs.
// An act: views never call it.
func (a *Remote) EnsureHostFetchers() {
	for name := range a.pendingHostIDs() {
		a.EnsureHostFetcher(name)
	}
}

// EnsureHostFetcher starts the host's fetcher unless one runs.
func (a *Remote) EnsureHostFetcher(name string) {
	if a.fetcherAlive(name) {
		return
	}

	dir := filepath.Dir(a.fetcherLockPath(name))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		a.Warning("", err)
		return
	}

	if err := runner.SpawnHostFetcher(a.Repo.Toplevel, name, filepath.Join(dir, name+".fetcher.log")); err != nil {
		a.Warning("", err)
	}
}

// pendingHostIDs are, by host, the invocations this repository still
// needs news of: running or queued there, or ended without their final
// refs fetched.
func (a *Remote) pendingHostIDs() map[string][]string {
	out := map[string][]string{}
	for name, recs := range a.hostRecords() {
		for _, r := range recs {
			if r.Active() || r.FinishedAt == nil || !a.fetchedFinal(r) {
				out[name] = append(out[name], r.InvocationID)
			}
		}
	}

	return out
}

// RunHostFetcher is the fetcher of host name (`host-fetch NAME`): it runs
// until no invocation of the host needs news, the host is lost
// (agency.host.<name>.lostAfter), the repository's data directory goes,
// or ctx ends. A second fetcher of the same host returns at once.
func (a *Remote) RunHostFetcher(ctx context.Context, name string) error {
	if err := os.MkdirAll(filepath.Dir(a.fetcherLockPath(name)), 0o700); err != nil {
		return err
	}

	f, err := os.OpenFile(a.fetcherLockPath(name), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return err
	}
	defer f.Close()
	if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) != nil {
		return nil
	}

	_ = f.Truncate(0)
	_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	sig := ""
	for ctx.Err() == nil {
		if _, err := os.Stat(a.Store.RepoDir()); err != nil {
			return nil
		}

		ids := a.pendingHostIDs()[name]
		if len(ids) == 0 {
			return nil
		}

		next, ok := a.fetchRound(ctx, name, sig, ids)
		if ok {
			sig = next
			continue
		}

		sig = ""

		if a.hostLost(name) {
			return nil
		}

		select {
		case <-ctx.Done():
		case <-time.After(hostRetryEvery):
		}
	}

	return nil
}

// fetchRound waits on the host for a change of ids (sig: the last one
// seen), then fetches their refs and writes what the host said. It
// returns the new signature, and false when the host did not answer or
// the fetch failed (the caller tries again).
func (a *Remote) fetchRound(ctx context.Context, name, sig string, ids []string) (string, bool) {
	h, _, err := a.hostOf(name)
	if err != nil {
		return "", false
	}

	wctx, cancel := context.WithTimeout(ctx, hostWaitWindow+hostStartWithin)
	defer cancel()
	args := append([]string{"host-serve", "wait", "--repo-id", a.Store.RepoID, "--sig=" + sig, "--within=" + hostWaitWindow.String()}, ids...)
	out, err := a.hostCall(wctx, h, nil, args...)
	if err != nil {
		return "", false
	}

	var ans HostWaitAnswer
	if json.Unmarshal(out, &ans) != nil {
		return "", false
	}

	a.noteHostMirror(name, ans.Mirror)
	if err := a.fetchHostRefs(wctx, h, name, ids); err != nil {
		a.noteHost(name, nil, err)
		return "", false
	}

	notes := a.writeHostAgents(name, ans.Agents)
	notes = append(notes, a.catchUp(wctx, name, ans.Agents)...)
	a.notifyHost(wctx, notes)
	// What follows a run's end here, as its supervisor does for a local
	// one: agency.autoLand; what went wrong goes into the run's
	// supervisor.log here, as a local supervisor writes it there.
	for _, n := range notes {
		if n.rec == nil || n.event != runner.NotifyFinished {
			continue
		}

		if err := a.Agency.AfterRun(wctx, n.rec.InvocationID); err != nil {
			a.Warning(n.rec.InvocationID, err)
		}
	}
	a.recordHostForgot(wctx, name, ids, ans.Agents)
	return ans.Sig, true
}

// noteHostMirror records that the host answered, and where its mirror is.
func (a *Remote) noteHostMirror(name, mirror string) {
	var hello *HostHello
	if st := a.hostStateOf(name); st.Hello != nil && mirror != "" && st.Hello.Mirror != mirror {
		cp := *st.Hello
		cp.Mirror = mirror
		hello = &cp
	}
	a.noteHost(name, hello, nil)
}

// writeHostAgents rewrites the cache of what the host said of its
// invocations; it returns the notifications of the agents that came to
// need input since the cache last said.
func (a *Remote) writeHostAgents(name string, agents map[string]HostAgent) []hostNote {
	c := a.readHostAgents(name)
	c.UpdatedAt = a.Stamp()
	var notes []hostNote
	for id, ag := range agents {
		if ag.Record != nil && ag.Record.Active() && ag.Display == displayNeedsInput && c.Agents[id].Display != displayNeedsInput {
			notes = append(notes, hostNote{runner.NotifyNeedsInput, ag.Display, ag.Record})
		}
		c.Agents[id] = ag
	}

	if os.MkdirAll(filepath.Dir(a.hostAgentsPath(name)), 0o700) == nil {
		_ = store.WriteJSONCache(a.hostAgentsPath(name), c)
	}

	return notes
}

// hostLost: the host has not answered for its lostAfter.
func (a *Remote) hostLost(name string) bool {
	c, err := a.hostConfigOf(name)
	if err != nil {
		return true
	}

	st := a.hostStateOf(name)
	if st.Reachable || st.Since == "" {
		return false
	}

	t, err := time.Parse(time.RFC3339, st.Since)
	return err == nil && a.Now().Sub(t) > c.LostAfter
}

// uploadPack is the program the fetch runs on the host: git-upload-pack,
// or under fpHostFetchPause a shell that waits first.
func (a *Remote) uploadPack() string {
	file, ok := strings.CutPrefix(a.Getenv("AGENCY_FAILPOINT"), fpHostFetchPause+"=")
	if !ok {
		return ""
	}
	q := host.Quote(file)
	return `sh -c 'touch ` + q + `.reached; while [ -e ` + q + ` ]; do sleep 0.05; done; exec git-upload-pack "$@"' upload-pack`
}
