package store

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
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
		pid, ok := tempWriterPID(c.name, c.marker)
		if pid != c.pid || ok != c.ok {
			t.Errorf("tempWriterPID(%q) = %d, %v; want %d, %v", c.name, pid, ok, c.pid, c.ok)
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

// A writer killed while its parent has not reaped it yet is a zombie: it
// is gone, though signal 0 still finds its pid (a supervisor's child killed
// under a parent that is still busy). Linux only (/proc).
func TestTempWriterGoneZombie(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc")
	}
	cmd := exec.Command("true")
	if err := cmd.Start(); err != nil {
		t.Skip("no true:", err)
	}
	defer cmd.Wait()
	pid := cmd.Process.Pid
	zombie := func() bool {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			return false
		}
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		return i > 0 && strings.HasPrefix(s[i+1:], " Z")
	}
	deadline := time.Now().Add(10 * time.Second)
	for !zombie() {
		if time.Now().After(deadline) {
			t.Fatal("the child never became a zombie")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if !TempWriterGone("agency-snapshot-index-"+strconv.Itoa(pid)+"-1", "agency-snapshot-index-") {
		t.Error("a killed (zombie) writer's temp file is taken for a live one's")
	}
}
