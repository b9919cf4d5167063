package store

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/git-agency/git-agency/errs"
)

func TestValidName(t *testing.T) {
	good := []string{"ab", "my-feature", "a1", "0-9", strings.Repeat("a", 40), "a--b"}
	bad := []string{"", "a", "-ab", "ab-", "Ab", "a_b", "a b", "a.b", strings.Repeat("a", 41), "ä-b", "a/b"}
	for _, n := range good {
		if !ValidName(n) {
			t.Errorf("ValidName(%q) = false, want true", n)
		}
	}
	for _, n := range bad {
		if ValidName(n) {
			t.Errorf("ValidName(%q) = true, want false", n)
		}
	}
}

func TestNewID(t *testing.T) {
	now := time.Date(2026, 2, 1, 12, 30, 0, 0, time.FixedZone("x", 3600))
	seen := map[string]bool{}
	for i := 0; i < 50; i++ {
		id := NewID(now)
		if !ValidID(id) || !strings.HasPrefix(id, "20260201113000-") {
			t.Fatalf("NewID = %q", id)
		}
		seen[id] = true
	}
	if len(seen) < 40 {
		t.Errorf("ids are not random enough: %d distinct of 50", len(seen))
	}
	if ShortID("20260201113000-a3f2") != "a3f2" {
		t.Error("ShortID")
	}
}

func TestResolve(t *testing.T) {
	cands := []Candidate{
		{ID: "20260101000000-aaaa", Name: "alpha"},
		{ID: "20260101000000-aabb", Name: "beta"},
		{ID: "20260102000000-cccc", Name: "gamma", Archived: true},
		{ID: "20260103000000-dddd", Broken: true},
		{ID: "20260104000000-eeee", Name: "alpha", Archived: true},
	}
	cases := []struct {
		query string
		all   bool
		want  int
		code  errs.Code
	}{
		{query: "alpha", want: 0},                            // exact name, archived namesake ignored
		{query: "20260101000000-aabb", want: 1},              // exact id
		{query: "20260101000000-aa", code: errs.EAmbiguous},  // ambiguous prefix
		{query: "20260101000000-aab", want: 1},               // unique prefix
		{query: "gamma", code: errs.ENotFound},               // archived name excluded
		{query: "20260102", code: errs.ENotFound},            // archived prefix excluded
		{query: "20260102", all: true, want: 2},              // --all widens prefixes
		{query: "gamma", all: true, code: errs.ENotFound},    // but never names
		{query: "20260102000000-cccc", want: 2},              // exact id of archived
		{query: "20260103", code: errs.ENotFound},            // broken: no prefix
		{query: "20260103", all: true, code: errs.ENotFound}, // not even with --all
		{query: "20260103000000-dddd", want: 3},              // broken: exact id
		{query: "", code: errs.ENotFound},                    // empty
		{query: "2026", code: errs.EAmbiguous},               // many
		{query: "zzz", code: errs.ENotFound},                 // nothing
	}
	for _, c := range cases {
		got, err := Resolve("worktree", c.query, cands, ResolveOptions{All: c.all})
		if c.code != "" {
			if !errs.Is(err, c.code) {
				t.Errorf("Resolve(%q, all=%v) err = %v, want %s", c.query, c.all, err, c.code)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("Resolve(%q, all=%v) = %d, %v; want %d", c.query, c.all, got, err, c.want)
		}
	}
	_, err := Resolve("worktree", "20260101000000-aa", cands, ResolveOptions{})
	e := errs.As(err)
	if len(e.Detail) != 2 || !strings.Contains(e.Detail[0], "alpha") || !strings.Contains(e.Detail[1], "beta") {
		t.Errorf("ambiguous detail = %q", e.Detail)
	}
	// The 4-hex end of an id, as watch shows it, when nothing else matches.
	suf := []Candidate{
		{ID: "20260101000000-b7c9"},
		{ID: "20260102000000-d4e5"},
		{ID: "20260103000000-d4e5"},
		{ID: "20260104000000-f1a2", Broken: true},
		{ID: "20260105000000-0a0a", Archived: true},
		{ID: "20260106000000-2026"},
	}
	for _, c := range []struct {
		query string
		all   bool
		want  int
		code  errs.Code
	}{
		{query: "b7c9", want: 0},
		{query: "inv-b7c9", want: 0},
		{query: "B7C9", code: errs.ENotFound},  // lowercase only
		{query: "b7c", want: 0},                // any prefix of the short id
		{query: "b", want: 0},                  //
		{query: "inv-b7", want: 0},             //
		{query: "d4", code: errs.EAmbiguous},   // several
		{query: "b7c9a", code: errs.ENotFound}, // at most four
		{query: "d4e5", code: errs.EAmbiguous}, // several
		{query: "f1a2", code: errs.ENotFound},  // broken: exact id only
		{query: "0a0a", code: errs.ENotFound},  // archived: only with --all
		{query: "0a0a", all: true, want: 4},    //
		{query: "2026", code: errs.EAmbiguous}, // a prefix wins over a suffix
		{query: "20260106", want: 5},           // prefix
	} {
		got, err := Resolve("invocation", c.query, suf, ResolveOptions{All: c.all})
		if c.code != "" {
			if !errs.Is(err, c.code) {
				t.Errorf("Resolve(%q) err = %v, want %s", c.query, err, c.code)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("Resolve(%q) = %d, %v; want %d", c.query, got, err, c.want)
		}
	}
	if _, err := Resolve("invocation", "d4e5", suf, ResolveOptions{}); len(errs.As(err).Detail) != 2 {
		t.Errorf("ambiguous suffix detail = %v", err)
	}
	// A name not found suggests the closest present one (a typo), never
	// an archived one, nor one of two equally close.
	for _, c := range []struct{ query, hint string }{
		{"alpa", "did you mean 'alpha'?"},
		{"betta", "did you mean 'beta'?"},
		{"lapha", "did you mean 'alpha'?"}, // two letters swapped
		{"gama", "list them"},
		{"zzzzzz", "list them"},
	} {
		_, err := Resolve("worktree", c.query, cands, ResolveOptions{})
		if e := errs.As(err); e.Code != errs.ENotFound || !strings.HasPrefix(e.Hint, c.hint) {
			t.Errorf("Resolve(%q): %v, hint %q; want a hint starting %q", c.query, err, e.Hint, c.hint)
		}
	}
	near := []Candidate{{ID: "1", Name: "feat-a"}, {ID: "2", Name: "feat-b"}}
	if _, err := Resolve("worktree", "feat-c", near, ResolveOptions{}); strings.Contains(errs.As(err).Hint, "did you mean") {
		t.Errorf("two equally close names: %q", errs.As(err).Hint)
	}
	// Two present records with one name (a corrupt state) are ambiguous.
	dup := []Candidate{{ID: "1", Name: "x1"}, {ID: "2", Name: "x1"}}
	if _, err := Resolve("worktree", "x1", dup, ResolveOptions{}); !errs.Is(err, errs.EAmbiguous) {
		t.Errorf("duplicate names: %v", err)
	}
}

func TestAtomicWriteAndRoundTrip(t *testing.T) {
	dir := t.TempDir()
	s := &Store{DataDir: dir, RepoID: "r1"}
	if err := os.MkdirAll(s.IntegrationWorktreeDir("20260101000000-aaaa"), 0o700); err != nil {
		t.Fatal(err)
	}
	rec := &WorktreeRecord{SchemaVersion: SchemaVersion, WorktreeID: "20260101000000-aaaa", Name: "n1", RepoID: "r1",
		Branch: "agency/n1-aaaa", ParentBranch: "main", TreePath: "/x/tree", CreatedAt: "2026-01-01T00:00:00Z", State: StatePresent}
	lock, err := s.Lock(time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Unlock()
	if err := s.WriteWorktree(rec); err != nil {
		t.Fatal(err)
	}
	got, err := s.ReadWorktree(rec.WorktreeID)
	if err != nil || !reflect.DeepEqual(got, rec) {
		t.Fatalf("round trip: %+v, %v", got, err)
	}
	info, err := os.Stat(s.IntegrationWorktreeMetaPath(rec.WorktreeID))
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Errorf("meta.json mode = %v, %v", info.Mode(), err)
	}
	// No temp files are left behind.
	ents, _ := os.ReadDir(s.IntegrationWorktreeDir(rec.WorktreeID))
	if len(ents) != 1 {
		t.Errorf("leftover files: %v", ents)
	}
	// The field names are the documented ones (--json shows them).
	data, _ := os.ReadFile(s.IntegrationWorktreeMetaPath(rec.WorktreeID))
	var m map[string]any
	json.Unmarshal(data, &m)
	for _, k := range []string{"schema_version", "worktree_id", "name", "repo_id", "branch", "parent_branch", "tree_path", "created_at", "state"} {
		if _, ok := m[k]; !ok {
			t.Errorf("meta.json lacks %q", k)
		}
	}
	// Concurrent writers never leave a torn file for readers.
	var wg sync.WaitGroup
	stop := make(chan struct{})
	bad := make(chan string, 1)
	go func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			if _, err := s.ReadWorktree(rec.WorktreeID); err != nil {
				select {
				case bad <- err.Error():
				default:
				}
			}
		}
	}()
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			for j := 0; j < 20; j++ {
				r := *rec
				r.Name = strings.Repeat("x", i+j+2)
				if err := s.WriteWorktree(&r); err != nil {
					t.Error(err)
				}
			}
		}(i)
	}
	wg.Wait()
	close(stop)
	select {
	case msg := <-bad:
		t.Errorf("reader saw a torn file: %s", msg)
	default:
	}
}

func TestScanBroken(t *testing.T) {
	dir := t.TempDir()
	s := &Store{DataDir: dir, RepoID: "r1"}
	write := func(id, content string) {
		os.MkdirAll(s.IntegrationWorktreeDir(id), 0o700)
		if content != "-" {
			os.WriteFile(s.IntegrationWorktreeMetaPath(id), []byte(content), 0o600)
		}
	}
	write("20260101000000-aaaa", `{"worktree_id":"20260101000000-aaaa","name":"a1","state":"present","created_at":"2026-01-01T00:00:00Z"}`)
	write("20260101000000-bbbb", `{not json`)
	write("20260101000000-cccc", "-")
	write("20260101000000-dddd", `{"worktree_id":"other","name":"d1","state":"present"}`)
	list, err := s.ScanWorktrees()
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 4 {
		t.Fatalf("len = %d", len(list))
	}
	broken := 0
	for _, e := range list {
		if e.Broken {
			broken++
			if e.Record != nil {
				t.Error("broken entry has a record")
			}
		}
	}
	if broken != 3 {
		t.Errorf("broken = %d, want 3", broken)
	}
}

func TestCheckInside(t *testing.T) {
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, "a", "b"), 0o700)
	ok := []string{filepath.Join(root, "a"), filepath.Join(root, "a", "b"), filepath.Join(root, "a", "missing")}
	bad := []string{root, filepath.Dir(root), "/", filepath.Join(root, "..", "x"), filepath.Join(root, "a", "..", ".."), "relative/../../x"}
	for _, p := range ok {
		if err := CheckInside(root, p); err != nil {
			t.Errorf("CheckInside(%q) = %v", p, err)
		}
	}
	for _, p := range bad {
		if err := CheckInside(root, p); !errs.Is(err, errs.EUnsafePath) {
			t.Errorf("CheckInside(%q) = %v, want E_UNSAFE_PATH", p, err)
		}
	}
	// A symlink inside root that points outside is removed as a link, and
	// RemoveAllInside refuses the root itself.
	if err := RemoveAllInside(root, root); !errs.Is(err, errs.EUnsafePath) {
		t.Errorf("RemoveAllInside(root) = %v", err)
	}
}

func TestLockTimeout(t *testing.T) {
	dir := t.TempDir()
	s := &Store{DataDir: dir, RepoID: "r1"}
	os.MkdirAll(s.RepoDir(), 0o700)
	l1, err := s.Lock(time.Second)
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.Lock(50 * time.Millisecond)
	if !errs.Is(err, errs.ELocked) {
		t.Fatalf("second lock: %v, want E_LOCKED", err)
	}
	l1.Unlock()
	l2, err := s.Lock(time.Second)
	if err != nil {
		t.Fatalf("after unlock: %v", err)
	}
	l2.Unlock()
}

func TestDataDir(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	cases := []struct {
		env  map[string]string
		conf string
		want string
	}{
		{map[string]string{"AGENCY_DATA_DIR": "/a", "XDG_DATA_HOME": "/x", "HOME": "/h"}, "/c", "/a"},
		{map[string]string{"XDG_DATA_HOME": "/x", "HOME": "/h"}, "/c", "/c"},
		{map[string]string{"XDG_DATA_HOME": "/x", "HOME": "/h"}, "", "/x/agency"},
		{map[string]string{"HOME": "/h"}, "", "/h/.local/share/agency"},
		{map[string]string{"HOME": "/h"}, "~/d", "/h/d"},
		// A relative XDG_DATA_HOME is ignored (XDG base directory rules).
		{map[string]string{"XDG_DATA_HOME": "x", "HOME": "/h"}, "", "/h/.local/share/agency"},
		{map[string]string{"AGENCY_DATA_DIR": "~/a", "HOME": "/h"}, "", "/h/a"},
	}
	for _, c := range cases {
		got, err := DataDir(env(c.env), c.conf)
		if err != nil || got != c.want {
			t.Errorf("DataDir(%v, %q) = %q, %v; want %q", c.env, c.conf, got, err, c.want)
		}
	}
	// A relative agency.dataDir is refused (unless the environment wins).
	for _, conf := range []string{"data", "./data", "../data", "~data"} {
		if got, err := DataDir(env(map[string]string{"HOME": "/h"}), conf); !errs.Is(err, errs.EConfig) {
			t.Errorf("DataDir(%q) = %q, %v; want E_CONFIG", conf, got, err)
		}
	}
	for _, rel := range []string{"data", "./data", "~data"} {
		if got, err := DataDir(env(map[string]string{"AGENCY_DATA_DIR": rel, "HOME": "/h"}), ""); !errs.Is(err, errs.EConfig) {
			t.Errorf("DataDir(AGENCY_DATA_DIR=%q) = %q, %v; want E_CONFIG", rel, got, err)
		}
	}
	if got, err := DataDir(env(map[string]string{"AGENCY_DATA_DIR": "/a"}), "data"); err != nil || got != "/a" {
		t.Errorf("env over a relative config: %q %v", got, err)
	}
}

func TestCheckpointsFile(t *testing.T) {
	s := &Store{DataDir: t.TempDir(), RepoID: "r"}
	inv := "20260128120500-b7c9"
	if err := os.MkdirAll(s.SandboxDir(inv), 0o700); err != nil {
		t.Fatal(err)
	}
	f, err := s.ReadCheckpoints(inv)
	if err != nil || len(f.Checkpoints) != 0 {
		t.Fatalf("missing file: %v %v", f, err)
	}
	if n := NextCheckpointID(inv, f, nil); n != 1 {
		t.Errorf("first id %d", n)
	}
	for _, id := range []int{2, 1} {
		if err := s.AppendCheckpoint(inv, Checkpoint{ID: id, SnapshotRef: SnapshotRef(inv, id)}); err != nil {
			t.Fatal(err)
		}
	}
	f, _ = s.ReadCheckpoints(inv)
	if len(f.Checkpoints) != 2 || f.Checkpoints[0].ID != 1 || f.Checkpoints[1].SnapshotRef != "refs/agency/snapshots/"+inv+"/2" {
		t.Fatalf("read back %+v", f)
	}
	refs := []string{SnapshotRef(inv, 7), SnapshotRefPrefix(inv) + "x", SnapshotRefPrefix(inv) + "07", "refs/agency/snapshots/other/9"}
	if n := NextCheckpointID(inv, f, refs); n != 8 {
		t.Errorf("next id with a ref ahead of the json: %d", n)
	}
	os.WriteFile(s.CheckpointsPath(inv), []byte("{"), 0o600)
	if _, err := s.ReadCheckpoints(inv); !errs.Is(err, errs.EStoreCorrupt) {
		t.Errorf("corrupt file: %v", err)
	}
	l, err := s.LockCheckpoints(inv, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.LockCheckpoints(inv, 20*time.Millisecond); !errs.Is(err, errs.ELocked) {
		t.Errorf("second lock: %v", err)
	}
	l.Unlock()
}

func TestEventsAfterCutLine(t *testing.T) {
	s := &Store{DataDir: t.TempDir(), RepoID: "r"}
	inv := "20260128120500-b7c9"
	if err := os.MkdirAll(s.InvocationDir(inv), 0o700); err != nil {
		t.Fatal(err)
	}
	if n, err := s.damagedEventLines(inv); n != 0 || err != nil {
		t.Fatalf("no file: %d %v", n, err)
	}
	if err := s.AppendEvent(inv, "one", nil); err != nil {
		t.Fatal(err)
	}
	// A writer killed mid-line leaves a line without its newline.
	f, _ := os.OpenFile(s.EventsPath(inv), os.O_WRONLY|os.O_APPEND, 0)
	f.WriteString(`{"time":"2026-01-28T12:05:00Z","ev`)
	f.Close()
	if n, _ := s.damagedEventLines(inv); n != 1 {
		t.Errorf("cut line: %d damaged", n)
	}
	if err := s.AppendEvent(inv, "two", nil); err != nil {
		t.Fatal(err)
	}
	evs, err := s.ReadEvents(inv)
	if err != nil || len(evs) != 2 || evs[0].Event != "one" || evs[1].Event != "two" {
		t.Fatalf("events after a cut line: %+v %v", evs, err)
	}
	if n, _ := s.damagedEventLines(inv); n != 1 {
		t.Errorf("after the next append: %d damaged", n)
	}
}

// The functions that expect the repo lock refuse to run without it, and
// change nothing then.
func TestLockedFunctionsNeedTheLock(t *testing.T) {
	s := &Store{DataDir: t.TempDir(), RepoID: "r1"}
	inv := "20260101000000-bbbb"
	if err := os.MkdirAll(s.InvocationDir(inv), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := s.WriteInvocation(&InvocationRecord{InvocationID: inv, Status: StatusRunning}); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(s.IntegrationWorktreeDir("20260101000000-aaaa"), 0o700); err != nil {
		t.Fatal(err)
	}
	wt := &WorktreeRecord{WorktreeID: "20260101000000-aaaa", Name: "n1", State: StatePresent}
	update := func() error {
		_, err := s.UpdateInvocationLocked(inv, func(r *InvocationRecord) error { r.Status = StatusFinished; return nil })
		return err
	}
	unlocked := func(when string) {
		t.Helper()
		if s.HoldsLock() {
			t.Fatalf("%s: HoldsLock = true", when)
		}
		if err := update(); !errs.Is(err, errs.EInternal) {
			t.Errorf("%s: UpdateInvocationLocked = %v, want E_INTERNAL", when, err)
		}
		if err := s.WriteWorktree(wt); !errs.Is(err, errs.EInternal) {
			t.Errorf("%s: WriteWorktree = %v, want E_INTERNAL", when, err)
		}
		if rec, _ := s.ReadInvocation(inv); rec.Status != StatusRunning {
			t.Errorf("%s: the record changed without the lock: %s", when, rec.Status)
		}
		if _, err := os.Stat(s.IntegrationWorktreeMetaPath(wt.WorktreeID)); !os.IsNotExist(err) {
			t.Errorf("%s: the worktree record was written without the lock", when)
		}
	}
	unlocked("before Lock")

	// Another lock (a sandbox's checkpoint lock) is not the repo lock.
	cl, err := s.LockCheckpoints(inv, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	unlocked("holding the checkpoint lock")
	cl.Unlock()

	lock, err := s.Lock(time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if !s.HoldsLock() {
		t.Fatal("HoldsLock = false under Lock")
	}
	if err := update(); err != nil {
		t.Fatalf("UpdateInvocationLocked under the lock: %v", err)
	}
	if err := s.WriteWorktree(wt); err != nil {
		t.Fatalf("WriteWorktree under the lock: %v", err)
	}
	lock.Unlock()
	lock.Unlock() // twice is harmless, and does not count twice
	if err := os.Remove(s.IntegrationWorktreeMetaPath(wt.WorktreeID)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.UpdateInvocation(time.Second, inv, func(r *InvocationRecord) error { r.Status = StatusRunning; return nil }); err != nil {
		t.Fatalf("UpdateInvocation takes the lock itself: %v", err)
	}
	unlocked("after Unlock")
}

func TestValidID(t *testing.T) {
	for s, want := range map[string]bool{
		"20260201113000-a1b2":     true,
		"20260201113000-0000":     true,
		"20260201113000-A1B2":     false,
		"20260201113000-a1b":      false,
		"20260201113000_a1b2":     false,
		"2026020111300x-a1b2":     false,
		"20260201113000-a1g2":     false,
		"20260201113000-a1b2.bak": false,
		"notes":                   false,
		"":                        false,
	} {
		if got := ValidID(s); got != want {
			t.Errorf("ValidID(%q) = %v, want %v", s, got, want)
		}
	}
}

// A write of the data directory's own .gitignore cut short leaves a temp
// file at the data directory's root: AtomicTemps lists it (doctor reports
// it, gc removes it), and nothing else of that root.
func TestAtomicTempsDataDirIgnore(t *testing.T) {
	data := t.TempDir()
	s, err := Open(data, filepath.Join(t.TempDir(), ".git"))
	if err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(data, "..gitignore.tmp-123-abc") // "." + name + ".tmp-" + writer
	for _, p := range []string{tmp, filepath.Join(data, ".notes.tmp-1"), filepath.Join(data, "x.tmp-1")} {
		if err := os.WriteFile(p, []byte("*\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	for _, f := range s.AtomicTemps() {
		got = append(got, f.Path)
	}
	if len(got) != 1 || got[0] != tmp {
		t.Fatalf("AtomicTemps = %q, want [%q]", got, tmp)
	}
}

// An invocation id with a typo gets the closest one as a hint, as a
// worktree name does: its short id for a short query, its full id else;
// none when two are as close, or none is close.
func TestResolveInvocationTypo(t *testing.T) {
	cands := []Candidate{
		{ID: "20261128085658-9bf7"},
		{ID: "20261128085700-0c3e"},
		{ID: "20261128085701-0c3f"},
	}
	for q, want := range map[string]string{
		"9bf8":                "did you mean '9bf7'?",
		"inv-9bf8":            "did you mean '9bf7'?",
		"20261128085658-9bf8": "did you mean '20261128085658-9bf7'?",
		"0c3d":                "",
		"1234":                "",
	} {
		_, err := Resolve("invocation", q, cands, ResolveOptions{})
		e := errs.As(err)
		if e == nil || e.Code != errs.ENotFound {
			t.Fatalf("%s: got %v, want E_NOT_FOUND", q, err)
		}
		if got := strings.Contains(e.Hint, "did you mean"); got != (want != "") || want != "" && !strings.Contains(e.Hint, want) {
			t.Errorf("%s: hint %q, want %q", q, e.Hint, want)
		}
	}
}
