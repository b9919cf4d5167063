package remote

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/git-agency/git-agency/store"
)

// HostWaitAnswer is `host-serve wait`: the state of the asked invocations,
// a signature of their records and events (the caller passes it back to
// wait for the next change) and the mirror they run in.
type HostWaitAnswer struct {
	Sig    string               `json:"sig"`
	Mirror string               `json:"mirror"`
	Agents map[string]HostAgent `json:"agents"`
}

// hostWaitPoll is how often `host-serve wait` looks at the records (on the
// host, at two stat calls per invocation).
const hostWaitPoll = 250 * time.Millisecond

// ServeWait is `host-serve wait`: it returns once the records or events of
// ids differ from what sig stood for (a turn ended, a checkpoint was
// taken, the agent finished) or within has passed, with their state then.
// An empty sig answers at once.
func ServeWait(ctx context.Context, open Opener, repoID, sig string, within time.Duration, ids []string) (*HostWaitAnswer, error) {
	mirror, err := servedMirror(ctx, repoID)
	if err != nil {
		return nil, err
	}

	a, err := open(ctx, mirror)
	if err != nil {
		return nil, err
	}

	deadline := time.Now().Add(within)
	t := time.NewTicker(hostWaitPoll)
	defer t.Stop()
	for sig != "" && a.waitSig(ids) == sig && time.Now().Before(deadline) {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-t.C:
		}
	}

	ans := &HostWaitAnswer{Sig: a.waitSig(ids), Mirror: mirror, Agents: map[string]HostAgent{}}
	for _, id := range ids {
		v, err := a.Agency.ShowInvocation(ctx, id)
		if err != nil || v.Record == nil {
			continue
		}
		ans.Agents[id] = HostAgent{Record: v.Record, Display: v.Display}
	}

	return ans, nil
}

// waitSig stands for the records, events, sandbox branches and checkpoint
// refs of ids as they are now (the refs by their loose files: a commit of
// the agent moves its branch's).
func (a *Remote) waitSig(ids []string) string {
	h := sha256.New()
	for _, id := range ids {
		for _, p := range []string{a.Store.InvocationMetaPath(id), a.Store.EventsPath(id),
			filepath.Join(a.Repo.CommonDir, "refs", "heads", store.SandboxBranch(id)),
			filepath.Join(a.Repo.CommonDir, filepath.FromSlash(store.SnapshotRefPrefix(id)))} {
			if fi, err := os.Stat(p); err == nil {
				fmt.Fprintf(h, "%s %d %d\n", p, fi.Size(), fi.ModTime().UnixNano())
			}
		}
	}

	return hex.EncodeToString(h.Sum(nil)[:12])
}
