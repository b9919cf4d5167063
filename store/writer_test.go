package store

import (
	"os"
	"os/exec"
	"strconv"
	"testing"
)

func TestTempWriterPID(t *testing.T) {
	for _, c := range []struct {
		name, marker string
		pid          int
		ok           bool
	}{
		{".meta.json.tmp-123-456789", AtomicTempMarker, 123, true},
		{".meta.json.tmp-123456789", AtomicTempMarker, 0, false}, // before pids were recorded
		{".meta.json.tmp--1", AtomicTempMarker, 0, false},
		{".meta.json.tmp-x-1", AtomicTempMarker, 0, false},
		{"agency-snapshot-index-77-1234", "agency-snapshot-index-", 77, true},
		{"agency-snapshot-index-1234", "agency-snapshot-index-", 0, false},
	} {
		pid, ok := TempWriterPID(c.name, c.marker)
		if pid != c.pid || ok != c.ok {
			t.Errorf("TempWriterPID(%q) = %d, %v; want %d, %v", c.name, pid, ok, c.pid, c.ok)
		}
	}
}

func TestTempWriterGone(t *testing.T) {
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skip("no true:", err)
	}
	dead := cmd.Process.Pid
	if TempWriterGone(".meta.json.tmp-"+strconv.Itoa(os.Getpid())+"-1", AtomicTempMarker) {
		t.Error("a live writer's temp file is taken for a dead one")
	}
	if !TempWriterGone(".meta.json.tmp-"+strconv.Itoa(dead)+"-1", AtomicTempMarker) {
		t.Error("a dead writer's temp file is not recognised")
	}
	if TempWriterGone(".meta.json.tmp-123456", AtomicTempMarker) {
		t.Error("a name without a pid is taken for a dead writer's")
	}
}
