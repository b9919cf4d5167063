package remote

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/git-agency/git-agency/errs"
	"github.com/git-agency/git-agency/store"
)

// A start on a host is noted here before its ssh call (an intent,
// <repo dir>/hosts/<name>.starts/<key>, locked by the starting process)
// and forgotten once the record is written here. A start killed in
// between (the link dropped, this process killed) may have left an agent
// running there without a record here. The host's record keeps the key
// (HostStartKey), so the next start on that host, or gc, finds the agent
// and writes its record here (adopts it); doctor reports it until then.

// hostStartIntent is what an intent file holds.
type hostStartIntent struct {
	Worktree string `json:"worktree_id"`
	Base     string `json:"base_commit"`
	At       string `json:"at"`
}

// staleStartAfter: an intent the host knows nothing of, older than this,
// is a start that never reached the host (its call is bounded by
// hostStartWithin), and is forgotten.
const staleStartAfter = hostStartWithin + time.Minute

func (a *Remote) HostStartsDir(name string) string {
	return filepath.Join(a.Store.RepoDir(), "hosts", name+".starts")
}

// newStartKey is a fresh random start key: 32 hex digits.
func newStartKey() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// validStartKey is key when it is one newStartKey makes, else "".
func validStartKey(key string) string {
	if len(key) != 32 || strings.Trim(key, "0123456789abcdef") != "" {
		return ""
	}
	return key
}

// beginHostStart adopts the agents of this host's interrupted starts,
// then notes a new start's intent (noteHostStart): its key, and the
// function that ends it.
func (a *Remote) beginHostStart(ctx context.Context, name, worktreeID, base string) (string, func(done bool), error) {
	_, _ = a.AdoptHostStarts(ctx, name)
	key := newStartKey()
	forget, err := a.noteHostStart(name, key, worktreeID, base)
	if err != nil {
		return "", nil, errs.IO("write", a.HostStartsDir(name), err)
	}
	return key, forget, nil
}

// noteHostStart writes the intent of a start and holds its lock until
// the returned function, which forgets the intent when done says the
// record is written (else a crash left it for adoption).
func (a *Remote) noteHostStart(name, key, worktreeID, base string) (func(done bool), error) {
	dir := a.HostStartsDir(name)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}

	path := filepath.Join(dir, key)
	b, _ := json.Marshal(hostStartIntent{Worktree: worktreeID, Base: base, At: a.Stamp()})
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		os.Remove(path)
		return nil, err
	}
	_ = f.Sync()

	return func(done bool) {
		if done {
			os.Remove(path)
		}
		f.Close()
	}, nil
}

// InterruptedHostStarts are, by host, the keys of starts whose process
// ended before it wrote the record here (their intent is not locked). A
// read.
func (a *Remote) InterruptedHostStarts() map[string][]string {
	out := map[string][]string{}
	dirs, _ := filepath.Glob(filepath.Join(a.Store.RepoDir(), "hosts", "*.starts"))
	for _, d := range dirs {
		name := strings.TrimSuffix(filepath.Base(d), ".starts")
		ents, _ := os.ReadDir(d)
		for _, e := range ents {
			if validStartKey(e.Name()) != "" && !startLocked(filepath.Join(d, e.Name())) {
				out[name] = append(out[name], e.Name())
			}
		}
		sort.Strings(out[name])
	}

	return out
}

// startLocked: a live start holds the intent's lock.
func startLocked(path string) bool { return lockHeld(path) }

// AdoptHostStarts asks host name about the starts here that were
// interrupted, writes the record of each agent it started for one (with
// the same id, in the worktree the start named) and forgets those intents,
// and those the host never saw once they are older than staleStartAfter.
// It returns the ids adopted; a host that does not answer leaves every
// intent as it is.
func (a *Remote) AdoptHostStarts(ctx context.Context, name string) ([]string, error) {
	keys := a.InterruptedHostStarts()[name]
	if len(keys) == 0 {
		return nil, nil
	}

	h, _, err := a.hostOf(name)
	if err != nil {
		return nil, err
	}

	ctx, cancel := context.WithTimeout(ctx, hostAnswerWithin)
	defer cancel()
	out, err := a.hostCall(ctx, h, nil, "host-serve", "status", "--repo-id", a.Store.RepoID, "--start-keys", strings.Join(keys, ","))
	if err != nil {
		return nil, err
	}

	var agents map[string]HostAgent
	if err := json.Unmarshal(out, &agents); err != nil {
		return nil, err
	}

	byKey := map[string]*store.InvocationRecord{}
	for id, ag := range agents {
		if ag.Record != nil && ag.Record.InvocationID == id && store.ValidID(id) && ag.Record.HostStartKey != "" {
			byKey[ag.Record.HostStartKey] = ag.Record
		}
	}

	var adopted []string
	for _, key := range keys {
		path := filepath.Join(a.HostStartsDir(name), key)
		if id, ok := a.adoptOne(ctx, name, path, byKey[key]); ok {
			if id != "" {
				adopted = append(adopted, id)
			}
			os.Remove(path)
		}
	}

	if len(adopted) > 0 {
		a.EnsureHostFetcher(name)
	}
	return adopted, nil
}

// adoptOne writes the record of remote, the host's agent of the intent at
// path (nil: the host has none). ok says the intent is done with: adopted
// (id), known here already, or stale.
func (a *Remote) adoptOne(ctx context.Context, name, path string, remote *store.InvocationRecord) (id string, ok bool) {
	var in hostStartIntent
	if store.ReadJSON(path, &in) != nil {
		return "", true
	}

	if remote == nil {
		at, err := time.Parse(time.RFC3339, in.At)
		return "", err != nil || a.Now().Sub(at) > staleStartAfter
	}

	if _, err := a.Store.ReadInvocation(remote.InvocationID); err == nil {
		return "", true
	}

	wt, err := a.Store.ReadWorktree(in.Worktree)
	if err != nil {
		return "", false
	}

	rec := localHostRecord(remote, name, wt, a.Store.RepoID, in.Base)
	if err := a.writeHostRecord(ctx, rec); err != nil {
		a.Warning(rec.InvocationID, err)
		return "", false
	}

	a.Event(rec.InvocationID, "created", map[string]any{"worktree_id": wt.WorktreeID, "runner": rec.Runner, "mode": rec.Mode, "base_commit": rec.BaseCommit, "host": name, "adopted": true})
	return rec.InvocationID, true
}

// hostStartsByKey are the records of repoID's mirror here whose start
// key is one of keys, by id (host-serve status --start-keys).
func (a *Remote) hostStartsByKey(keys []string) []string {
	want := map[string]bool{}
	for _, k := range keys {
		if validStartKey(k) != "" {
			want[k] = true
		}
	}

	var ids []string
	list, _ := a.Store.ScanInvocations()
	for _, e := range list {
		if e.Record != nil && want[e.Record.HostStartKey] {
			ids = append(ids, e.Record.InvocationID)
		}
	}

	return ids
}
