package runner

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/git-agency/git-agency/runner/stream"
	"github.com/git-agency/git-agency/store"
)

// The final semantic status of every captured real run.
func TestSemanticOfRealStreams(t *testing.T) {
	cases := map[string]string{
		"claude_success.jsonl":  stream.StatusReadyForReview,
		"claude_denied.jsonl":   stream.StatusNeedsInput,
		"claude_fail500.jsonl":  stream.StatusError,
		"claude_retry503.jsonl": stream.StatusError,
		"claude_deadport.jsonl": stream.StatusError,
		"codex_success.jsonl":   stream.StatusReadyForReview,
		"codex_shell.jsonl":     stream.StatusReadyForReview,
		"codex_readonly.jsonl":  stream.StatusReadyForReview,
		"codex_fail500.jsonl":   stream.StatusError,
		"codex_deadport.jsonl":  stream.StatusError,
		// Captures of claude 2.1.330 and codex 0.169 (with their stderr).
		"real/c-deny.raw.jsonl":          stream.StatusNeedsInput,
		"real/c-multi.raw.jsonl":         stream.StatusNeedsInput,
		"real/c-hooks.raw.jsonl":         stream.StatusReadyForReview,
		"real/c-SUBAGENT.raw.jsonl":      stream.StatusReadyForReview,
		"real/c-THINK.raw.jsonl":         stream.StatusReadyForReview,
		"real/c-hang.raw.jsonl":          stream.StatusError,
		"real/x-deny.raw.jsonl":          stream.StatusNeedsInput,
		"real/x-hookbypass.raw.jsonl":    stream.StatusReadyForReview,
		"real/x-WEB.raw.jsonl":           stream.StatusReadyForReview,
		"real/x-multi.raw.jsonl":         stream.StatusReadyForReview,
		"real/x-resume-agency.raw.jsonl": stream.StatusReadyForReview,
	}
	for name, want := range cases {
		t.Run(name, func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join("..", "testdata", "fixtures", "stream", name))
			if err != nil {
				t.Fatal(err)
			}
			p := stream.NewParser(stream.FormatAuto, nil)
			p.Write(b)
			if e, err := os.ReadFile(filepath.Join("..", "testdata", "fixtures", "stream", strings.TrimSuffix(name, ".raw.jsonl")+".stderr.log")); err == nil {
				p.Stderr().Write(e)
			}
			p.Flush()
			got, sum := semanticStatus(nil, p.State(), &Exit{})
			if got != want || sum == "" {
				t.Errorf("semanticStatus = %q, %q; want %q with a summary", got, sum, want)
			}
		})
	}
}

func TestSemantic(t *testing.T) {
	done := stream.StreamState{Events: 5, LastKind: stream.KindResult, ResultSeen: true, LastSummary: "r", LastMessage: "Done"}
	tests := []struct {
		name     string
		rs       *stream.RunnerStatus
		st       stream.StreamState
		end      *Exit
		want     string
		wantSumm string
	}{
		{"runner status wins while running", &stream.RunnerStatus{Status: stream.StatusBlocked, Summary: "no creds"}, done, nil, stream.StatusBlocked, "no creds"},
		{"runner status without summary", &stream.RunnerStatus{Status: stream.StatusWorking}, done, nil, stream.StatusWorking, "Done"},
		{"the stream's end wins over runner status after exit", &stream.RunnerStatus{Status: stream.StatusWorking, Summary: "busy"}, done, &Exit{}, stream.StatusReadyForReview, "Done"},
		{"runner status speaks for a stream without an end", &stream.RunnerStatus{Status: stream.StatusBlocked, Summary: "no creds"}, stream.StreamState{LastKind: stream.KindToolCall, LastSummary: "Write a"}, &Exit{}, stream.StatusBlocked, "no creds"},
		{"invalid runner status ignored", &stream.RunnerStatus{Status: "zzz"}, done, &Exit{}, stream.StatusReadyForReview, "Done"},
		{"error", nil, stream.StreamState{TurnFailed: true, LastError: "boom"}, &Exit{}, stream.StatusError, "boom"},
		{"needs input", nil, stream.StreamState{WaitingForUser: true, LastSummary: "Which?"}, &Exit{}, stream.StatusNeedsInput, "Which?"},
		{"denied, nothing changed", nil, stream.StreamState{TurnEnded: true, LastMessage: "Done", Denials: 1, LastDenial: "denied: patch rejected"}, &Exit{Unchanged: true}, stream.StatusBlocked, "nothing changed: denied: patch rejected"},
		{"denied then done", nil, stream.StreamState{TurnEnded: true, LastMessage: "Done", Denials: 1, LastDenial: "denied: patch rejected"}, &Exit{}, stream.StatusNeedsInput, "denied: patch rejected; then: Done"},
		{"timeout", nil, stream.StreamState{LastKind: stream.KindToolCall, LastSummary: "Bash sleep 99"}, &Exit{TimedOut: "no output for 5m0s"}, stream.StatusError, "timed out (no output for 5m0s): Bash sleep 99"},
		{"timeout after a clean end", nil, done, &Exit{TimedOut: "timeout 1m0s"}, stream.StatusError, "timed out (timeout 1m0s): r"},
		{"clean end", nil, done, &Exit{}, stream.StatusReadyForReview, "Done"},
		{"codex turn end", nil, stream.StreamState{LastKind: stream.KindTurnEnd, TurnEnded: true, LastSummary: "turn completed"}, &Exit{}, stream.StatusReadyForReview, "turn completed"},
		{"still running", nil, done, nil, "", "Done"},
		{"cut off mid-run", nil, stream.StreamState{LastKind: stream.KindToolCall, LastSummary: "Write a"}, &Exit{}, "", "Write a"},
		{"nothing", nil, stream.StreamState{}, &Exit{}, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, sum := semanticStatus(tt.rs, tt.st, tt.end)
			if got != tt.want || sum != tt.wantSumm {
				t.Errorf("semanticStatus = %q, %q; want %q, %q", got, sum, tt.want, tt.wantSumm)
			}
		})
	}
}

func TestParserFormat(t *testing.T) {
	for in, want := range map[string]struct {
		f  string
		ok bool
	}{"claude": {"claude", true}, "codex": {"codex", true}, "auto": {"", true}, "": {"", false}, "none": {"", false}} {
		f, ok := ParserFormat(in)
		if f != want.f || ok != want.ok {
			t.Errorf("ParserFormat(%q) = %q, %v", in, f, ok)
		}
	}
}

// status.json may have two writers at once (a supervisor finishing while
// the next turn's starts): readers never see a torn file and no writer
// fails because another moved its temp file away.
func TestWriteVolatileConcurrentWriters(t *testing.T) {
	path := filepath.Join(t.TempDir(), statusFile)
	big := strings.Repeat("x", 64<<10)
	var wg sync.WaitGroup
	stop := make(chan struct{})
	errc := make(chan error, 100)
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				if err := writeVolatile(path, map[string]any{"writer": w, "i": i, "pad": big}); err != nil {
					errc <- err
					return
				}
			}
		}(w)
	}
	readerDone := make(chan struct{})
	go func() {
		defer close(readerDone)
		for {
			select {
			case <-stop:
				return
			default:
			}
			b, err := os.ReadFile(path)
			if err != nil {
				continue // not written yet
			}
			var v map[string]any
			if err := json.Unmarshal(b, &v); err != nil {
				errc <- fmt.Errorf("torn read (%d bytes): %v", len(b), err)
				return
			}
		}
	}()
	wg.Wait()
	close(stop)
	<-readerDone
	close(errc)
	for err := range errc {
		t.Fatal(err)
	}
	ents, _ := os.ReadDir(filepath.Dir(path))
	if len(ents) != 1 {
		t.Fatalf("temp files left: %v", ents)
	}
}

// ReadLiveStatus follows status.json: a rewritten file is read again (the
// store keeps the decoded file only while its stamp is unchanged), and the
// status handed out is the caller's.
func TestReadLiveStatusSeesRewrite(t *testing.T) {
	st, rec := supervisedRecord(t, t.TempDir(), &store.InvocationRecord{InvocationID: "20260101000000-5a5a",
		Status: store.StatusRunning, Runner: "sh", SandboxPath: filepath.Join(t.TempDir(), "tree")})
	path := statusPath(st, rec.InvocationID)
	old := time.Now().Add(-time.Hour)
	write := func(session string, at time.Time) {
		t.Helper()
		b, _ := json.Marshal(LiveStatus{Format: "claude", SessionID: session})
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(path, at, at); err != nil {
			t.Fatal(err)
		}
	}
	write("s1", old)
	if ls := ReadLiveStatus(st, rec.InvocationID); ls == nil || ls.SessionID != "s1" {
		t.Fatalf("live status %+v, want session s1", ls)
	}
	ReadLiveStatus(st, rec.InvocationID).SessionID = "changed by a caller"
	if ls := ReadLiveStatus(st, rec.InvocationID); ls == nil || ls.SessionID != "s1" {
		t.Fatalf("live status %+v: a caller's change was kept", ls)
	}
	write("s2", old.Add(time.Second))
	if ls := ReadLiveStatus(st, rec.InvocationID); ls == nil || ls.SessionID != "s2" {
		t.Fatalf("live status %+v after a rewrite, want session s2", ls)
	}
	if err := os.WriteFile(path, []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	if ls := ReadLiveStatus(st, rec.InvocationID); ls != nil {
		t.Fatalf("live status %+v from a damaged file, want none", ls)
	}
	os.Remove(path)
	if ls := ReadLiveStatus(st, rec.InvocationID); ls != nil {
		t.Fatalf("live status %+v from no file, want none", ls)
	}
}
