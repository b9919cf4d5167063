package runner

import (
	"os"
	"testing"
	"time"

	"github.com/git-agency/git-agency/store"
)

// A run's exited event is in events.jsonl before the run reads as ended
// (outcome file or record): a command that sees it ended (land --all
// ordering agents that ended within one second) finds its end event.
func TestFinishAppendsExitedBeforeTheRunReadsEnded(t *testing.T) {
	dir := t.TempDir()
	st, rec := supervisedRecord(t, dir, &store.InvocationRecord{InvocationID: "20260101000000-e0d5",
		Runner: "sh", Mode: store.ModeHeadless, Status: store.StatusRunning, SandboxPath: dir})
	inv := rec.InvocationID
	var endedBeforeEvent []string
	st.WriteFault = func(path string) error {
		if path != st.EventsPath(inv) {
			return nil
		}
		if cur, err := st.ReadInvocation(inv); err == nil && cur.Status != store.StatusRunning {
			endedBeforeEvent = append(endedBeforeEvent, cur.Status)
		}
		return nil
	}
	s := &Supervisor{Store: st, Invocation: inv, LockTimeout: 5 * time.Second}
	s.noteExit()
	if err := s.finish(3, store.ExitExited); err != nil {
		t.Fatal(err)
	}
	if len(endedBeforeEvent) > 0 {
		t.Fatalf("an event was appended after the run read as %v", endedBeforeEvent)
	}
	evs, err := st.ReadEvents(inv)
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 1 || evs[0].Event != "exited" || evs[0].Data["exit_code"] != float64(3) || evs[0].Data["exit_reason"] != store.ExitExited {
		t.Fatalf("events = %+v", evs)
	}
	got, err := st.ReadInvocation(inv)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != store.StatusFailed || store.Deref(got.ExitReason) != store.ExitExited || got.ExitCode == nil || *got.ExitCode != 3 {
		t.Fatalf("record: status %s, reason %s, code %v", got.Status, store.Deref(got.ExitReason), got.ExitCode)
	}
}

// A stop the user asked for is the exit reason in both the event and the
// record.
func TestFinishStoppedEventAndRecordAgree(t *testing.T) {
	dir := t.TempDir()
	st, rec := supervisedRecord(t, dir, &store.InvocationRecord{InvocationID: "20260101000000-e0d6",
		Runner: "sh", Mode: store.ModeHeadless, Status: store.StatusRunning, SandboxPath: dir,
		StopRequested: store.ExitStopped})
	inv := rec.InvocationID
	s := &Supervisor{Store: st, Invocation: inv, LockTimeout: 5 * time.Second}
	s.noteExit()
	if err := s.finish(130, store.ExitExited); err != nil {
		t.Fatal(err)
	}
	evs, _ := st.ReadEvents(inv)
	if len(evs) != 1 || evs[0].Data["exit_reason"] != store.ExitStopped {
		t.Fatalf("events = %+v", evs)
	}
	got, _ := st.ReadInvocation(inv)
	if got.Status != store.StatusFinished || store.Deref(got.ExitReason) != store.ExitStopped {
		t.Fatalf("record: status %s, reason %s", got.Status, store.Deref(got.ExitReason))
	}
}

// A run whose invocation directory was removed under it (its data
// directory deleted) ends its supervisor at once: no try can write the
// record, and it must not retry for EndRetryFor.
func TestRecordEndGivesUpWhenTheRecordIsGone(t *testing.T) {
	dir := t.TempDir()
	st, rec := supervisedRecord(t, dir, &store.InvocationRecord{InvocationID: "20260101000000-e0d7",
		Runner: "sh", Mode: store.ModeHeadless, Status: store.StatusRunning, SandboxPath: dir})
	s := &Supervisor{Store: st, Invocation: rec.InvocationID, LockTimeout: 5 * time.Second}
	if err := os.RemoveAll(st.InvocationDir(rec.InvocationID)); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.finish(0, store.ExitExited) }()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("the end of a run whose record is gone was written")
		}
	case <-time.After(time.Minute):
		t.Fatal("the supervisor still tries to write a record whose directory is gone")
	}
}
