package agency

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/git-agency/git-agency/errs"
	"github.com/git-agency/git-agency/store"
)

// A cleanup that cannot undo everything says so in the error it returns:
// the original failure keeps its code, and a detail line names what was
// left behind (here the branch, whose deletion fails).
func TestCleanupFailureIsReported(t *testing.T) {
	repo := newRepo(t)
	ctx := context.Background()
	a, err := Open(ctx, repo, &failingRunner{match: "branch -D", n: 1})
	if err != nil {
		t.Fatal(err)
	}
	a.Failpoint = func(step string) error {
		if step == FPCreateAfterWorktreeAdd {
			return errs.New(errs.EInternal, "", "injected failure at %s", step)
		}
		return nil
	}
	_, err = a.CreateWorktree(ctx, CreateWorktreeOptions{Name: "feat"})
	e := errs.As(err)
	if e.Code != errs.EInternal || !strings.Contains(e.Msg, "injected failure") {
		t.Fatalf("err = %v, want the injected failure", err)
	}
	detail := strings.Join(e.Detail, "\n")
	if !strings.Contains(detail, "left something behind") || !strings.Contains(detail, "branch -D") {
		t.Errorf("detail = %q, want what the cleanup left behind", detail)
	}
	if !strings.Contains(e.Hint, "doctor") {
		t.Errorf("hint = %q, want a pointer to doctor", e.Hint)
	}
	// What it says is true: the branch is there, the rest is gone.
	if br := gitOut(t, repo, "branch", "--list", "agency/*"); br == "" {
		t.Error("the detail names a branch that is not there")
	}
	if ents, _ := os.ReadDir(a.Store.IntegrationWorktreesDir()); len(ents) != 0 {
		t.Errorf("record directory left behind: %v", ents)
	}

	// A cleanup that undoes everything adds nothing.
	b, err := Open(ctx, repo, nil)
	if err != nil {
		t.Fatal(err)
	}
	b.Failpoint = a.Failpoint
	_, err = b.CreateWorktree(ctx, CreateWorktreeOptions{Name: "other"})
	if e := errs.As(err); e == nil || len(e.Detail) != 0 {
		t.Errorf("err = %v, detail %v: want the failure alone", err, e.Detail)
	}
}

// An event that cannot be appended is not silent: it reaches Warn and the
// invocation's supervisor.log, and the command goes on.
func TestEventFailureIsWarned(t *testing.T) {
	repo := newRepo(t)
	ctx := context.Background()
	a, err := Open(ctx, repo, nil)
	if err != nil {
		t.Fatal(err)
	}
	var warned []error
	a.Warn = func(err error) { warned = append(warned, err) }
	inv := "20260101000000-cccc"
	// events.jsonl is a directory: no event can be appended.
	if err := os.MkdirAll(filepath.Join(a.Store.InvocationDir(inv), "events.jsonl"), 0o700); err != nil {
		t.Fatal(err)
	}
	a.event(inv, "landed", map[string]any{"x": 1})
	if len(warned) != 1 || !errs.Is(warned[0], errs.EIO) || !strings.Contains(warned[0].Error(), `"landed" event was not recorded`) {
		t.Fatalf("warned = %v, want one E_IO warning about the landed event", warned)
	}
	log, err := os.ReadFile(a.Store.SupervisorLogPath(inv))
	if err != nil || !strings.Contains(string(log), `warning: invocation `+inv+`: the "landed" event was not recorded`) {
		t.Errorf("supervisor.log = %q, %v", log, err)
	}
}

// Work under the repo lock has a deadline; ending it releases the lock.
func TestLockWorkHasADeadline(t *testing.T) {
	repo := newRepo(t)
	a, err := Open(context.Background(), repo, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, unlock, err := a.lockWork(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	dl, ok := ctx.Deadline()
	if !ok || time.Until(dl) > LockedWorkTimeout {
		t.Errorf("deadline = %v, %v: want one within %s", dl, ok, LockedWorkTimeout)
	}
	if !a.Store.HoldsLock() {
		t.Error("lockWork does not hold the lock")
	}
	if _, err := a.Store.Lock(10 * time.Millisecond); !errs.Is(err, errs.ELocked) {
		t.Errorf("a second Lock = %v, want E_LOCKED", err)
	}
	unlock()
	if a.Store.HoldsLock() || ctx.Err() == nil {
		t.Errorf("after unlock: HoldsLock %v, ctx.Err %v", a.Store.HoldsLock(), ctx.Err())
	}
	l, err := a.Store.Lock(time.Second)
	if err != nil {
		t.Fatalf("the lock is still held after unlock: %v", err)
	}
	l.Unlock()
}

// The agency functions named …Locked that write records check the lock
// too: reconcile without it repairs nothing.
func TestReconcileLockedNeedsTheLock(t *testing.T) {
	f := newLandFixture(t)
	rec := f.sandbox("20260101000000-dddd", "true")
	if _, err := f.a.Store.UpdateInvocation(time.Second, rec.InvocationID, func(r *store.InvocationRecord) error {
		r.Status = store.StatusRunning
		pid := 1 << 30 // no such process: the supervisor is gone
		r.SupervisorPID = &pid
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	var warned []error
	f.a.Warn = func(err error) { warned = append(warned, err) }
	cur, _ := f.a.Store.ReadInvocation(rec.InvocationID)
	if got := f.a.reconcileLocked(f.ctx, cur); got.Status != store.StatusRunning || len(warned) != 1 || !errs.Is(warned[0], errs.EInternal) {
		t.Fatalf("without the lock: status %s, warned %v", got.Status, warned)
	}
	if got := f.a.Reconcile(f.ctx, cur); got.Status != store.StatusFailed {
		t.Errorf("Reconcile (it takes the lock): status %s, want failed", got.Status)
	}
}
