package remote

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"time"

	"github.com/git-agency/git-agency/errs"
	"github.com/git-agency/git-agency/host"
)

// Looks are what the hosts answered a view asked live (by host name),
// kept for the command's life and never written anywhere.
type Looks struct {
	sync.Mutex
	m map[string]hostLook
	// read: what one view pass read of each host's caches (the state and
	// what its fetcher last wrote), read once per pass, not once per row.
	read map[string]hostCacheRead
}

type hostCacheRead struct {
	agents map[string]HostAgent
	st     HostState
}

type hostLook struct {
	agents map[string]HostAgent
	err    error
	at     time.Time
}

// hostLookFor is how long a live answer serves the views of one command
// (a watch asks again after it).
const hostLookFor = time.Second

// LookAtHosts asks, at once and each bounded by hostAnswerWithin, every
// host with running or queued invocations of this repository that has no
// fetcher at work (with one, its caches are fresh: the view reads them).
// A read: the answers are kept in memory for this command only.
func (a *Remote) LookAtHosts(ctx context.Context) {
	a.Looks.Lock()
	a.Looks.read = nil
	a.Looks.Unlock()
	var wg sync.WaitGroup
	for name, recs := range a.hostRecords() {
		var ids []string
		for _, r := range recs {
			if r.Active() || r.Queued() {
				ids = append(ids, r.InvocationID)
			}
		}

		if len(ids) == 0 || a.fetcherAlive(name) {
			continue
		}

		a.Looks.Lock()
		look, done := a.Looks.m[name]
		a.Looks.Unlock()

		if done && time.Since(look.at) < hostLookFor {
			continue
		}

		wg.Add(1)
		go func(name string, ids []string) {
			defer wg.Done()
			agents, err := a.askStatus(ctx, name, ids)
			a.Looks.Lock()
			if a.Looks.m == nil {
				a.Looks.m = map[string]hostLook{}
			}

			a.Looks.m[name] = hostLook{agents: agents, err: err, at: time.Now()}
			a.Looks.Unlock()
		}(name, ids)
	}

	wg.Wait()
}

// askStatus is `host-serve status` of ids, bounded by hostAnswerWithin,
// writing nothing here.
func (a *Remote) askStatus(ctx context.Context, name string, ids []string) (map[string]HostAgent, error) {
	h, _, err := a.hostOf(name)
	if err != nil {
		return nil, err
	}

	ctx, cancel := context.WithTimeout(ctx, hostAnswerWithin)
	defer cancel()
	res, err := h.Run(ctx, host.RemoteProgram(append([]string{"host-serve", "status", "--repo-id", a.Store.RepoID}, ids...)...), nil)
	if err != nil {
		return nil, err
	}
	if res.ExitCode != 0 {
		return nil, errs.HostFailed(name, "host-serve status", res.ExitCode, string(res.Stderr))
	}

	var agents map[string]HostAgent
	if err := json.Unmarshal(res.Stdout, &agents); err != nil {
		return nil, errs.HostFailed(name, "host-serve status", 0, err.Error())
	}

	return agents, nil
}

// hostSays is what the host last said of its invocations, and its state:
// this command's live answer when it asked, else the fetcher's caches
// (read once per view pass: LookAtHosts starts one).
func (a *Remote) hostSays(name string) (map[string]HostAgent, HostState) {
	a.Looks.Lock()
	look, ok := a.Looks.m[name]
	read, done := a.Looks.read[name]
	a.Looks.Unlock()
	if !done {
		read.st = a.hostStateOf(name)
		if !ok || (look.err != nil && !isUnreachable(look.err)) {
			read.agents = a.readHostAgents(name).Agents
		}

		a.Looks.Lock()
		if a.Looks.read == nil {
			a.Looks.read = map[string]hostCacheRead{}
		}
		a.Looks.read[name] = read
		a.Looks.Unlock()
	}

	st := read.st
	switch {
	case !ok || look.err != nil && !isUnreachable(look.err):
		return read.agents, st
	case look.err != nil:
		st.Reachable = false
		return nil, st
	}

	st.Reachable, st.Since = true, ""
	return look.agents, st
}

func isUnreachable(err error) bool {
	var u *host.ErrUnreachable
	return errors.As(err, &u)
}
