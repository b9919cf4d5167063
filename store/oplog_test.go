package store

import (
	"os"
	"testing"
	"time"

	"github.com/git-agency/git-agency/errs"
)

func TestOplogAppendAndFold(t *testing.T) {
	s := &Store{DataDir: t.TempDir(), RepoID: "r1"}
	os.MkdirAll(s.RepoDir(), 0o700)
	if _, err := s.AppendOperation(Operation{Op: OpLand}); !errs.Is(err, errs.EInternal) {
		t.Fatalf("AppendOperation without the lock = %v, want E_INTERNAL", err)
	}
	lock, err := s.Lock(time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Unlock()
	if lines, err := s.ReadOplog(); err != nil || len(lines) != 0 {
		t.Fatalf("empty log: %v %v", lines, err)
	}
	add := func(op Operation) Operation {
		t.Helper()
		out, err := s.AppendOperation(op)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	land := add(Operation{Op: OpLand, Key: "land:a:1", InvocationID: "a"})
	if land.Seq != 1 || land.Time == "" {
		t.Fatalf("first append: %+v", land)
	}
	if again := add(Operation{Op: OpLand, Key: "land:a:1"}); again.Seq != 1 {
		t.Fatalf("a key seen twice was logged twice: %+v", again)
	}
	disc := add(Operation{Op: OpDiscard, InvocationID: "b"})

	// A crash cut a line short: the next append starts a line of its own.
	f, _ := os.OpenFile(s.OplogPath(), os.O_WRONLY|os.O_APPEND, 0)
	f.WriteString(`{"seq":9,"op":"disc`)
	f.Close()
	add(Operation{Seq: 3, Op: OpUndo, Undoes: disc.Seq, State: UndoStarted})

	lines, _ := s.ReadOplog()
	log := FoldOplog(lines)
	if len(lines) != 3 || log.Interrupted == nil || log.Interrupted.Undoes != disc.Seq {
		t.Fatalf("interrupted undo not seen: %+v", log)
	}
	if e := log.Entry(disc.Seq); e.UndoState != UndoStarted || e.UndoneBy != 0 {
		t.Errorf("discard entry %+v", e)
	}
	add(Operation{Seq: 3, Op: OpUndo, Undoes: disc.Seq, State: UndoDone})
	lines, _ = s.ReadOplog()
	log = FoldOplog(lines)
	if log.Interrupted != nil || log.Entry(disc.Seq).UndoneBy != 3 || log.Next().Seq != land.Seq {
		t.Fatalf("after done: %+v", log)
	}
	if n := NextSeq(lines); n != 4 {
		t.Errorf("next seq %d", n)
	}

	// An aborted undo is as if it never ran.
	add(Operation{Seq: 4, Op: OpUndo, Undoes: land.Seq, State: UndoStarted})
	add(Operation{Seq: 4, Op: OpUndo, Undoes: land.Seq, State: UndoAborted})
	lines, _ = s.ReadOplog()
	log = FoldOplog(lines)
	if log.Interrupted != nil || log.Next().Seq != land.Seq {
		t.Fatalf("after abort: %+v", log)
	}

	// Once undone, the same key is a new land (landed again, same result).
	add(Operation{Seq: 5, Op: OpUndo, Undoes: land.Seq, State: UndoDone})
	if relanded := add(Operation{Op: OpLand, Key: "land:a:1"}); relanded.Seq != 6 {
		t.Fatalf("land after undo not logged: %+v", relanded)
	}
}

// A skipped operation (undo --skip) no longer blocks older ones, nor an
// interrupted undo of it.
func TestOplogFoldSkipped(t *testing.T) {
	lines := []Operation{
		{Seq: 1, Op: OpLand},
		{Seq: 2, Op: OpDiscard},
		{Seq: 3, Op: OpUndo, Undoes: 2, State: UndoStarted},
		{Seq: 4, Op: OpUndo, Undoes: 2, State: UndoSkipped},
	}
	log := FoldOplog(lines)
	if log.Interrupted != nil {
		t.Fatalf("a skipped operation's interrupted undo still blocks: %+v", log.Interrupted)
	}
	if e := log.Entry(2); e.UndoState != UndoSkipped || e.UndoneBy != 4 {
		t.Errorf("skipped entry %+v", e)
	}
	if n := log.Next(); n == nil || n.Seq != 1 {
		t.Errorf("next %+v, want #1", n)
	}
}
