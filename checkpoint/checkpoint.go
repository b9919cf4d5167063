package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/git-agency/git-agency/errs"
	"github.com/git-agency/git-agency/gitcore"
	"github.com/git-agency/git-agency/store"
	"github.com/git-agency/git-agency/wall"
)

// LockTimeout bounds the wait for a sandbox's checkpoint lock.
const LockTimeout = 30 * time.Second

// Event names in events.jsonl.
const (
	EventTaken  = "checkpoint"
	EventFailed = "checkpoint_failed"
)

// DenylistFromConfig returns the extra denylist globs of
// agency.checkpoint.denylist (multi-valued).
func DenylistFromConfig(cfg *gitcore.Config) []string {
	return cfg.GetAll("agency.checkpoint.denylist")
}

// DefaultDenylist are the untracked files never written into a snapshot
// tree (checkpoints, `land --apply`): the usual names of secrets. Users add
// globs with the multi-valued `agency.checkpoint.denylist`; gitcore.Denied
// matches a path against them.
var DefaultDenylist = []string{".env", ".env.*", "*.key", "*.pem", "credentials.json", "secrets.json"}

// DefaultMaxFileSize is agency.checkpoint.maxFileSize's default: untracked
// files larger than 50 MiB are left out of checkpoints.
const DefaultMaxFileSize = 50 << 20

// LeaveOutFromConfig returns agency.checkpoint.exclude (multi-valued,
// gitignore syntax) and agency.checkpoint.maxFileSize (bytes, with an
// optional k, m or g suffix as git config takes them; 0 for no limit): the
// untracked files checkpoints leave out. A bad size is E_CONFIG.
func LeaveOutFromConfig(cfg *gitcore.Config) ([]string, int64, error) {
	const key = "agency.checkpoint.maxFileSize"
	size := int64(DefaultMaxFileSize)
	if v, ok := cfg.Get(key); ok && strings.TrimSpace(v) != "" {
		n, err := parseSize(v)
		if err != nil {
			return nil, 0, errs.Config(key, v, "a size in bytes such as 52428800, 50m or 1g (0 for no limit)")
		}
		size = n
	}
	return cfg.GetAll("agency.checkpoint.exclude"), size, nil
}

// parseSize parses a non-negative integer with an optional k, m or g
// suffix (powers of 1024, as git config --type=int).
func parseSize(v string) (int64, error) {
	v = strings.ToLower(strings.TrimSpace(v))
	mult := int64(1)
	switch {
	case strings.HasSuffix(v, "k"):
		mult, v = 1<<10, strings.TrimSuffix(v, "k")
	case strings.HasSuffix(v, "m"):
		mult, v = 1<<20, strings.TrimSuffix(v, "m")
	case strings.HasSuffix(v, "g"):
		mult, v = 1<<30, strings.TrimSuffix(v, "g")
	}

	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 || n > (1<<62)/mult {
		return 0, fmt.Errorf("invalid size %q", v)
	}

	return n * mult, nil
}

// FullDenylist is the built-in denylist plus extra (agency.checkpoint.denylist).
func FullDenylist(extra []string) []string {
	return append(append([]string(nil), DefaultDenylist...), extra...)
}

// SnapshotTree builds the snapshot tree of a sandbox's uncommitted work
// (HEAD plus every change; untracked files too when includeUntracked), with
// the built-in denylist plus extraDenylist applied and .agency/ and exclude
// left out, without touching the sandbox's index, HEAD or files. When
// untracked files match the denylist, Snapshot.Denied lists them and no
// object was written. `agent diff` and `land --apply` build their trees
// with it, checkpoints with the same request (snapshotRequest, the one
// place that policy is assembled) plus what they leave out.
func SnapshotTree(ctx context.Context, repo *gitcore.Repo, treePath string, includeUntracked bool, extraDenylist []string, exclude ...string) (*gitcore.Snapshot, error) {
	return repo.Tree(treePath).SnapshotTree(ctx, snapshotRequest(includeUntracked, extraDenylist, exclude))
}

// request is a checkpoint's snapshot request: SnapshotTree's, leaving out
// what o.LeaveOut and o.MaxFileSize name.
func (o Options) request() gitcore.SnapshotRequest {
	req := snapshotRequest(o.IncludeUntracked, o.Denylist, o.Exclude)
	req.LeaveOut, req.MaxUntrackedSize = gitcore.NewIgnoreMatcher(o.LeaveOut), o.MaxFileSize
	return req
}

// PreviewTree is the snapshot tree of a sandbox's uncommitted work for a
// read path that predicts a land (the conflict forecast of ls, show and
// watch): untracked files included, and, like a checkpoint, without what
// o.LeaveOut and o.MaxFileSize name, so that looking never hashes a
// multi-gigabyte artefact. land --apply itself uses SnapshotTree.
func PreviewTree(ctx context.Context, o Options) (*gitcore.Snapshot, error) {
	o.IncludeUntracked = true
	return o.Repo.Tree(o.SandboxPath).SnapshotTree(ctx, o.request())
}

func snapshotRequest(includeUntracked bool, extraDenylist, exclude []string) gitcore.SnapshotRequest {
	return gitcore.SnapshotRequest{
		IncludeUntracked: includeUntracked,
		Denylist:         FullDenylist(extraDenylist),
		Exclude:          append([]string{store.AgencyDir}, exclude...),
	}
}

// LeftOutPatterns returns gitignore patterns for the untracked files
// checkpoints leave out (o.LeaveOut, and each file of status over
// o.MaxFileSize): they are in no checkpoint, so whatever restores one must
// leave them where they are.
func LeftOutPatterns(o Options, status []gitcore.StatusEntry) []string {
	out := append([]string(nil), o.LeaveOut...)
	req := gitcore.SnapshotRequest{MaxUntrackedSize: o.MaxFileSize}
	t := o.Repo.Tree(o.SandboxPath)
	for _, e := range status {
		if e.Kind == gitcore.StatusUntracked && !strings.HasSuffix(e.Path, "/") && t.LeavesOut(req, e.Path) {
			out = append(out, gitcore.LiteralIgnorePattern(e.Path))
		}
	}
	return out
}

// Options says which sandbox to checkpoint and how.
type Options struct {
	Repo             *gitcore.Repo
	Store            *store.Store
	Invocation       string
	SandboxPath      string
	IncludeUntracked bool
	// Denylist holds extra globs (agency.checkpoint.denylist).
	Denylist []string
	// LeaveOut (agency.checkpoint.exclude, gitignore syntax) and
	// MaxFileSize (agency.checkpoint.maxFileSize, 0 for no limit) name the
	// untracked files a checkpoint leaves out: never hashed, kept in the
	// sandbox, landed by --apply as usual.
	LeaveOut    []string
	MaxFileSize int64
	// Reason is recorded: "auto", "fallback", "exit", "manual", "before-apply".
	Reason string
	// Warn, when set, is told of an event that could not be recorded;
	// when nil it goes to the invocation's supervisor.log. Never silent.
	Warn func(error)
	// Exclude leaves these paths out of the snapshot (undo's checkpoints
	// leave denylisted files out instead of failing).
	Exclude []string

	// Kept and Changed: the checkpointer's kept index and the paths its
	// file events reported since (see gitcore.KeptIndex); nil for a
	// checkpoint that looks at every file.
	Kept    *gitcore.KeptIndex
	Changed []string

	// Shadow and Branch: a walled sandbox's own git directory and its
	// branch (without refs/heads/); what its agent's git wrote there is
	// imported (ImportShadow) before the snapshot is taken. A shadow that
	// does not exist imports nothing.
	Shadow, Branch string
}

// Take snapshots the sandbox into refs/agency/snapshots/<inv>/<n>
// and records it in checkpoints.json. It returns (nil, nil) when skipped
// because the tree equals the previous checkpoint's (or, before the first
// one, HEAD's: there is nothing uncommitted to save). When untracked files
// match the denylist it appends a checkpoint_failed event and returns an
// E_DENYLISTED error; other failures append checkpoint_failed too and return
// E_CHECKPOINT_FAILED.
func Take(ctx context.Context, o Options) (*store.Checkpoint, error) {
	return TakeReporting(ctx, o, nil)
}

// TakeReporting is Take; onDenied (when not nil) decides whether
// a denylist hit is reported as an event (the checkpointer reports a set of
// files once, not on every attempt).
func TakeReporting(ctx context.Context, o Options, onDenied func([]string) bool) (*store.Checkpoint, error) {
	cp, denied, err := checkpointLocked(ctx, o)
	if len(denied) > 0 {
		if onDenied == nil || onDenied(denied) {
			o.event(EventFailed, map[string]any{
				"reason": "denylisted_file", "files": denied, "invocation_id": o.Invocation,
				"trigger": o.Reason,
			})
		}
		return nil, errs.CheckpointDenylisted(denied)
	}

	if err != nil {
		o.event(EventFailed, map[string]any{
			"reason": "error", "error": err.Error(), "invocation_id": o.Invocation, "trigger": o.Reason,
		})
		var e *errs.Error
		if errors.As(err, &e) && e.Code == errs.ELocked {
			return nil, e
		}

		return nil, errs.CheckpointFailed(o.Invocation, err)
	}

	if cp != nil {
		o.event(EventTaken, map[string]any{
			"id": cp.ID, "snapshot_ref": cp.SnapshotRef, "reason": cp.Reason, "invocation_id": o.Invocation,
		})
	}

	return cp, nil
}

// event appends an event to the invocation's events.jsonl; a failure goes
// to o.Warn, or to supervisor.log: the checkpoint's outcome stands either
// way.
func (o Options) event(name string, data map[string]any) {
	err := o.Store.AppendEvent(o.Invocation, name, data)
	if err == nil {
		return
	}

	e := errs.EventNotRecorded(o.Invocation, name, err)
	if o.Warn != nil {
		o.Warn(e)
		return
	}

	// When supervisor.log cannot take the line either, there is nowhere
	// left to say it: the invocation directory is unwritable, which
	// doctor's data_dir check reports.
	_ = o.Store.AppendSupervisorLog(o.Invocation, "warning: "+e.Msg)
}

// nestedReported remembers, per invocation, the nested repositories already
// reported in this process.
var nestedReported sync.Map

func checkpointLocked(ctx context.Context, o Options) (*store.Checkpoint, []string, error) {
	lock, err := o.Store.LockCheckpoints(o.Invocation, LockTimeout)
	if err != nil {
		return nil, nil, err
	}
	defer lock.Unlock()

	if o.Shadow != "" {
		if _, err := wall.ImportShadow(ctx, o.Repo, o.Shadow, o.Branch); err != nil {
			return nil, nil, err
		}
	}

	// The processes that create the ref and compute the diffstat start
	// now and wait for their input while the snapshot is taken: it comes
	// at once afterwards.
	refc, stats := o.Repo.StartRefCreation(ctx), o.Repo.StartShortstat(ctx)
	defer refc.Close()
	defer stats.Close()

	// The snapshot refs are read while the snapshot is taken (both are
	// mostly process start-up); only this lock's holder creates them.
	type refsResult struct {
		refs []gitcore.Ref
		err  error
	}
	refsCh := make(chan refsResult, 1)
	go func() {
		refs, err := o.Repo.RefsWithTrees(ctx, store.SnapshotRefPrefix(o.Invocation))
		refsCh <- refsResult{refs, err}
	}()
	req := o.request()
	req.Kept, req.Changed = o.Kept, o.Changed
	snap, err := o.Repo.Tree(o.SandboxPath).SnapshotTree(ctx, req)
	rr := <-refsCh
	if err != nil {
		return nil, nil, err
	}

	if len(snap.Denied) > 0 {
		sort.Strings(snap.Denied)
		return nil, snap.Denied, nil
	}

	if len(snap.Nested) > 0 {
		// A nested repository cannot be snapshotted (its commits live only
		// inside it); the rest of the tree still is. Said once per set of
		// paths, not on every attempt.
		key := strings.Join(snap.Nested, "\x00")
		if prev, ok := nestedReported.Load(o.Invocation); !ok || prev.(string) != key {
			nestedReported.Store(o.Invocation, key)
			o.event("checkpoint_incomplete", map[string]any{
				"reason": "nested_repository", "paths": snap.Nested, "invocation_id": o.Invocation,
			})
		}
	}

	file, err := o.Store.ReadCheckpoints(o.Invocation)
	if err != nil {
		return nil, nil, err
	}
	if rr.err != nil {
		return nil, nil, rr.err
	}

	refs := rr.refs

	// The previous checkpoint: the highest-numbered ref that exists; before
	// the first one, HEAD (a clean tree has nothing to save).
	compare, prevN := snap.HeadTree, 0
	var names []string
	for _, r := range refs {
		names = append(names, r.Name)
		if n, ok := store.SnapshotRefNumber(o.Invocation, r.Name); ok && n > prevN {
			compare, prevN = r.Tree, n
		}
	}

	if compare == snap.Tree {
		return nil, nil, nil
	}

	// The diffstat is computed while the commit and its ref are made.
	type statResult struct {
		stat gitcore.Shortstat
		err  error
	}
	statCh := make(chan statResult, 1)
	go func() {
		stat, err := diffstat(ctx, o.Repo, stats, snap)
		statCh <- statResult{stat, err}
	}()
	n := store.NextCheckpointID(o.Invocation, file, names)
	commit, n, err := createSnapshotRef(ctx, o, snap, n, refc)
	sr := <-statCh
	if err != nil {
		return nil, nil, err
	}
	if sr.err != nil {
		return nil, nil, sr.err
	}

	stat := sr.stat
	cp := store.Checkpoint{
		ID:                n,
		SnapshotRef:       store.SnapshotRef(o.Invocation, n),
		SnapshotCommit:    commit,
		HeadSHA:           snap.Head,
		CreatedAt:         time.Now().UTC().Format(time.RFC3339),
		IncludesUntracked: o.IncludeUntracked,
		Diffstat:          FormatDiffstat(stat),
		Reason:            o.Reason,
	}
	if err := o.Store.AppendCheckpoint(o.Invocation, cp); err != nil {
		return nil, nil, err
	}

	return &cp, nil, nil
}

// diffstat is the snapshot's diffstat against HEAD, through the started
// diff-tree when HEAD's tree is known (or HEAD unborn).
func diffstat(ctx context.Context, repo *gitcore.Repo, stats *gitcore.ShortstatQuery, snap *gitcore.Snapshot) (gitcore.Shortstat, error) {
	if snap.Head != "" && snap.HeadTree == "" {
		return repo.DiffShortstat(ctx, snap.Head, snap.Tree)
	}
	return stats.Diff(snap.HeadTree, snap.Tree)
}

// createSnapshotRef commits a snapshot's tree (parent HEAD) and creates its
// ref, checkpoint n or, when someone outside the lock took n, the next free
// number (never overwriting); it returns the commit and the number used.
// The first attempt creates the ref through refc.
func createSnapshotRef(ctx context.Context, o Options, snap *gitcore.Snapshot, n int, refc *gitcore.RefCreation) (string, int, error) {
	for attempt := 0; ; attempt++ {
		commit, err := o.Repo.CommitTree(ctx, snap.Tree, snap.Head, fmt.Sprintf("agency snapshot %s %d", o.Invocation, n))
		if err != nil {
			return "", 0, err
		}

		if attempt == 0 {
			err = refc.Create(ctx, store.SnapshotRef(o.Invocation, n), commit)
		} else {
			err = o.Repo.CreateRef(ctx, store.SnapshotRef(o.Invocation, n), commit)
		}
		if err == nil {
			return commit, n, nil
		}
		if !errors.Is(err, gitcore.ErrRefExists) || attempt == 5 {
			return "", 0, err
		}

		n++
	}
}

// FormatDiffstat renders a shortstat as "+42 -15 in 3 files".
func FormatDiffstat(s gitcore.Shortstat) string {
	files := "files"
	if s.Files == 1 {
		files = "file"
	}
	return fmt.Sprintf("+%d -%d in %d %s", s.Insertions, s.Deletions, s.Files, files)
}

// List returns an invocation's checkpoints: checkpoints.json,
// plus any snapshot ref it does not record (a supervisor killed between
// creating the ref and writing the file), rebuilt from the commit. Only
// checkpoints whose ref exists are listed: a record whose ref is gone
// (discard, gc) names nothing that can be applied. checkpoints.json keeps
// them as history.
func List(ctx context.Context, repo *gitcore.Repo, st *store.Store, inv string) ([]store.Checkpoint, error) {
	file, err := st.ReadCheckpoints(inv)
	if err != nil {
		return nil, err
	}

	refs, err := repo.ForEachRef(ctx, store.SnapshotRefPrefix(inv))
	if err != nil {
		return nil, err
	}

	exists := map[string]bool{}
	for _, r := range refs {
		exists[r.Name] = true
	}

	known := map[int]bool{}
	out := []store.Checkpoint{}
	for _, c := range file.Checkpoints {
		known[c.ID] = true
		if exists[store.SnapshotRef(inv, c.ID)] {
			out = append(out, c)
		}
	}

	for _, r := range refs {
		n, ok := store.SnapshotRefNumber(inv, r.Name)
		if !ok || known[n] {
			continue
		}

		c := store.Checkpoint{ID: n, SnapshotRef: r.Name, SnapshotCommit: r.Object, Reason: "unrecorded"}
		if info, err := repo.Commit(ctx, r.Object); err == nil {
			c.CreatedAt = info.Committed.Format(time.RFC3339)
			if len(info.Parents) > 0 {
				c.HeadSHA = info.Parents[0]
			}
			if stat, err := repo.DiffShortstat(ctx, c.HeadSHA, info.Tree); err == nil {
				c.Diffstat = FormatDiffstat(stat)
			}
		}

		out = append(out, c)
	}

	sort.SliceStable(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// DeleteSnapshotRefs removes every snapshot ref of an invocation;
// checkpoints.json is kept as history. (Discard keeps them for undo.)
func DeleteSnapshotRefs(ctx context.Context, repo *gitcore.Repo, inv string) error {
	return repo.DeleteRefs(ctx, store.SnapshotRefPrefix(inv))
}
