package agency

import (
	"context"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/git-agency/git-agency/errs"
	"github.com/git-agency/git-agency/gitcore"
	"github.com/git-agency/git-agency/store"
)

// A queue under agency.maxActive: `agent start --queue` records a start
// over the limit as queued (its sandbox made, no supervisor). Whenever a
// slot frees, the oldest queued invocation of the repository starts: the
// supervisor of an agent that ends drains the queue, and so do every
// start, every command that records the end of an invocation whose
// supervisor died (Reconcile) and gc (Settle). Reads never do. Draining
// holds the repo lock, reads agency.maxActive afresh (a supervisor or a
// watch lives for hours) and counts the active invocations under the lock,
// so the limit holds however starts and ends race.

// MaxActive is agency.maxActive (0: no limit), as this command read it.
func (a *App) MaxActive() (int, error) { return maxActiveOf(a.Config) }

func maxActiveOf(cfg *gitcore.Config) (int, error) {
	n, ok := cfg.Int("agency.maxActive", 0)
	if !ok || n < 0 {
		v, _ := cfg.Get("agency.maxActive")
		return 0, errs.Config("agency.maxActive", v, "a whole number, 0 or more")
	}
	return n, nil
}

// currentMaxActive is agency.maxActive read from git now: the queue is
// drained by long-lived processes too (a supervisor, a watch), which must
// not go by the value they started with.
func (a *App) currentMaxActive(ctx context.Context) (int, error) {
	entries, err := a.Repo.Config(ctx)
	if err != nil {
		return 0, gitErr(err)
	}
	return maxActiveOf(gitcore.NewConfig(entries))
}

// queueConfig is --queue, else agency.queue.
func (a *App) queueConfig(flag bool) (bool, error) {
	if flag {
		return true, nil
	}

	q, ok := a.Config.Bool("agency.queue", false)
	if !ok {
		v, _ := a.Config.Get("agency.queue")
		return false, errs.Config("agency.queue", v, "true or false")
	}

	return q, nil
}

// queuedRecords are the queued invocations, oldest first (those queued
// on a host are its queue's, not this one's).
func queuedRecords(list []store.InvocationEntry) []*store.InvocationRecord {
	var q []*store.InvocationRecord
	for _, e := range list {
		if e.Record.Queued() && e.Record.Host == "" {
			q = append(q, e.Record)
		}
	}

	sort.SliceStable(q, func(i, j int) bool {
		if q[i].QueuedAt != q[j].QueuedAt {
			return q[i].QueuedAt < q[j].QueuedAt
		}
		return q[i].InvocationID < q[j].InvocationID
	})
	return q
}

// QueuePlaces maps each queued invocation to its place (1 = next).
func QueuePlaces(list []store.InvocationEntry) map[string]int {
	places := map[string]int{}
	for i, r := range queuedRecords(list) {
		places[r.InvocationID] = i + 1
	}
	return places
}

// drainQueue starts queued invocations while slots are free, under the repo
// lock (waiting up to wait for it; a busy lock is left to whoever holds
// it), and fails at once those that can never start (their worktree or
// sandbox was removed), slot or not. It returns the ids it changed.
func (a *App) drainQueue(ctx context.Context, wait time.Duration) []string {
	ctx, unlock, err := a.lockWorkWait(ctx, wait)
	if err != nil {
		return nil
	}
	defer unlock()
	return a.drainQueueLocked(ctx)
}

// drainQueueLocked is drainQueue for a caller holding the lock.
func (a *App) drainQueueLocked(ctx context.Context) []string {
	list, err := a.Store.ScanInvocations()
	if err != nil {
		return nil
	}

	queue := queuedRecords(list)
	if len(queue) == 0 {
		return nil
	}

	max, err := a.currentMaxActive(ctx)
	if err != nil {
		return nil
	}

	n, err := a.countActive(ctx)
	if err != nil {
		return nil
	}

	var changed []string
	for _, r := range queue {
		if a.unstartable(r) != "" {
			// Out of the queue, failed with the reason: it must not hold a
			// place until a slot frees.
			// Its error is the reason, recorded in its record and events.
			_ = a.launchQueuedLocked(ctx, r)
			changed = append(changed, r.InvocationID)
			continue
		}

		if max > 0 && n >= max {
			continue
		}

		if a.launchQueuedLocked(ctx, r) == nil {
			changed = append(changed, r.InvocationID)
			n++
		}
	}

	return changed
}

// unstartable says why a queued invocation can never start ("" if it can).
func (a *App) unstartable(rec *store.InvocationRecord) string {
	if wt, err := a.Store.ReadWorktree(rec.IntegrationWorktreeID); err != nil || wt.State != store.StatePresent {
		return "its integration worktree was removed while it was queued"
	}
	if a.sandboxTree(rec) == "" {
		return "its sandbox tree was removed while it was queued"
	}
	return ""
}

// FPQueueRecordFailed fails the write that records a queued invocation
// which could not start.
const FPQueueRecordFailed = "queue:record-failed"

// launchQueuedLocked starts a queued invocation: its record becomes
// starting and its supervisor is spawned. One that cannot start (its
// worktree or sandbox was removed meanwhile, the spawn failed) is failed
// with the reason, never left queued.
func (a *App) launchQueuedLocked(ctx context.Context, r *store.InvocationRecord) error {
	if err := a.Store.RequireLock("starting a queued invocation"); err != nil {
		return err
	}

	rec, err := a.Store.ReadInvocation(r.InvocationID)
	if err != nil {
		return err
	}
	if !rec.Queued() {
		return errs.NotQueued(rec.InvocationID, rec.Status)
	}

	why := a.unstartable(rec)
	if why == "" {
		rec.Status = store.StatusStarting
		rec.StartedAt = a.now()
		if err = a.Store.WriteInvocation(rec); err == nil {
			if err = a.spawnSupervisor(ctx, rec, false); err == nil {
				// Its supervisor has the environment now: no secret stays
				// on disk longer than the queue needs it.
				a.dropQueuedEnv(rec.InvocationID)
				a.event(rec.InvocationID, "dequeued", nil)
				return nil
			}
		}

		why = "its supervisor could not start: " + errs.As(err).Msg
	}

	rec.Status = store.StatusFailed
	rec.ExitReason = store.Str(store.ExitUnknown)
	rec.FinishedAt = store.Str(a.now())
	rec.LandingStatus = store.Str(store.LandingPending)
	rec.Error = why
	werr := a.fail(FPQueueRecordFailed)
	if werr == nil {
		werr = a.Store.WriteInvocation(rec)
	}

	if werr == nil {
		a.dropQueuedEnv(rec.InvocationID)
	} else {
		// The record stays queued (tried again) or starting without a
		// supervisor, which reconcile fails once startGrace has passed.
		why += "; recording the failure failed too: " + errs.As(werr).Msg
	}

	a.event(rec.InvocationID, "queue_failed", map[string]any{"error": why})
	return errs.New(errs.EInternal, "", "%s", why)
}

// StartQueuedNow is `agent start --now X`: start a queued invocation at
// once, whatever agency.maxActive says.
func (a *App) StartQueuedNow(ctx context.Context, query string) (*store.InvocationRecord, error) {
	rec, err := a.ResolveInvocation(query)
	if err != nil {
		return nil, err
	}

	ctx, unlock, err := a.lockWork(ctx)
	if err != nil {
		return nil, err
	}
	defer unlock()

	if cur, err := a.Store.ReadInvocation(rec.InvocationID); err == nil {
		rec = cur
	}

	if !rec.Queued() {
		state := rec.Status
		if l := store.Deref(rec.LandingStatus); l != "" && l != store.LandingPending {
			state = l
		}
		return nil, errs.NotQueued(rec.InvocationID, state)
	}

	if err := a.launchQueuedLocked(ctx, rec); err != nil {
		return nil, err
	}

	return a.Store.ReadInvocation(rec.InvocationID)
}

// supervisorEnv is the environment of an invocation's supervisor: the one
// its `agent start --queue` kept (store.QueuedEnvFile) when it was queued,
// else nil (ours). The data directory is the one the record was found in.
func (a *App) supervisorEnv(rec *store.InvocationRecord) ([]string, error) {
	env, ok, err := a.Store.ReadQueuedEnv(rec.InvocationID)
	if err != nil || !ok {
		return nil, err
	}

	out := make([]string, 0, len(env)+1)
	for _, kv := range env {
		if !strings.HasPrefix(kv, "AGENCY_DATA_DIR=") {
			out = append(out, kv)
		}
	}

	return append(out, "AGENCY_DATA_DIR="+a.Store.DataDir), nil
}

// dropQueuedEnv removes the kept environment of an invocation that left
// the queue (started, failed or discarded); one that cannot be removed is
// said, and doctor reports it until gc removes it.
func (a *App) dropQueuedEnv(inv string) {
	if err := a.Store.RemoveQueuedEnv(inv); err != nil {
		a.warn(inv, err)
	}
}

// queuedEnvLeftovers are kept environments (store.QueuedEnvFile) of
// invocations that left the queue: a kill between the start of a queued
// invocation, or its discard, and the removal of its file left them. They
// can hold secrets, so doctor reports them and gc removes them.
func (a *App) queuedEnvLeftovers() []Leftover {
	ids, _ := store.ReadIDDirs(a.Store.InvocationsDir())
	var out []Leftover
	for _, id := range ids {
		path := a.Store.QueuedEnvPath(id)
		fi, err := os.Lstat(path)
		if err != nil {
			continue
		}
		if !a.queuedEnvStale(id) {
			continue
		}

		out = append(out, Leftover{Kind: GCQueuedEnv, Invocation: id, Path: path, Bytes: fi.Size(),
			Reason: "the environment an 'agent start --queue' kept (0600, may hold secrets), and the invocation is no longer queued"})
	}

	return out
}

// queuedEnvStale reports whether an invocation's kept environment outlived
// the queue: it has a record, and the record is neither queued nor
// starting (a queued start in progress removes it itself).
func (a *App) queuedEnvStale(inv string) bool {
	rec, err := a.Store.ReadInvocation(inv)
	if err != nil {
		return false
	}
	return !rec.Queued() && rec.Status != store.StatusStarting
}

// removeQueuedEnvLeftover is gc of a GCQueuedEnv item, checked again.
func (a *App) removeQueuedEnvLeftover(it *GCItem) error {
	if !a.queuedEnvStale(it.Invocation) {
		it.Kept, it.KeptWhy = true, "queued again since the plan"
		return nil
	}
	return a.Store.RemoveQueuedEnv(it.Invocation)
}
