package runner

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// The logs directory and the agent state are the walled agent's: what the
// supervisor reads there, outside the wall, is never read through a link
// (it would show a file of the user's) nor waited on as a FIFO (the
// supervisor would hang, its agent's end never recorded).
func TestAgentFilesNotFollowedNorWaitedOn(t *testing.T) {
	dir := t.TempDir()
	secret := filepath.Join(dir, "secret")
	if err := os.WriteFile(secret, []byte(`{"state":"idle"}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "hook.jsonl")
	if err := os.Symlink(secret, link); err != nil {
		t.Fatal(err)
	}
	if evs, _ := readHookEvents(link, 0); len(evs) != 0 {
		t.Errorf("readHookEvents read through a link: %v", evs)
	}

	fifo := filepath.Join(dir, "fifo.jsonl")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		readHookEvents(fifo, 0)
		rolloutDenials(fifo, dir, time.Time{})
		wallSetupHint(fifo, 0, dir)
		close(done)
	}()

	select {
	case <-done:
	case <-time.After(10 * time.Second):
		// (unblock the reader so the test ends)
		if f, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			f.Close()
		}
		t.Fatal("a reader waited on a FIFO in the agent's files")
	}
}
