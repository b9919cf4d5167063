package tidy

import (
	"context"
	"os"
	"strings"
	"time"

	"github.com/git-agency/git-agency/agency/internal/core"
	"github.com/git-agency/git-agency/errs"
	"github.com/git-agency/git-agency/gitcore"
	"github.com/git-agency/git-agency/store"
)

// StaleTempAge is the age past which a temp file has no live writer: a
// record write or a snapshot's temp index lives for well under a second,
// even a checkpoint of a very large tree for far less than this.
const StaleTempAge = 10 * time.Minute

// Leftover is what a process killed in the middle of a step left behind
// in the data directory or the git directory.
type Leftover struct {
	Kind       string // GCTempFile or GCInvocationDir
	Invocation string
	Path       string
	Bytes      int64
	Reason     string
}

// leftovers finds the residue of killed writers: WriteFileAtomic temp
// files and SnapshotTree temp indexes whose writer (named in them) is gone,
// or older than StaleTempAge (a younger one without a known writer may
// belong to a write in progress; staleTemp), and record directories
// without meta.json (invocations, integration worktrees). Such a directory
// names its creator (store.CreatorFile): a gone creator's is a leftover at
// once, a live one's a create in progress. Without a marker, the lock
// tells: a create makes the directory and writes the record under the
// repo lock, so a directory still without its record once the lock is
// ours is a leftover whatever its age.
func (a *Tidier) leftovers() []Leftover {
	var out []Leftover
	now := a.Now()
	isIndex := func(name string) bool { return strings.HasPrefix(name, gitcore.SnapshotIndexPrefix) }
	for _, g := range []struct {
		files []store.TempFile
		what  string
	}{
		{a.Store.AtomicTemps(), "temp file of a record write"},
		{store.FilesIn(a.Repo.SnapshotIndexDirs(), isIndex), "temp index of a checkpoint"},
	} {
		for _, t := range g.files {
			if staleTemp(t.Path, t.ModTime, now) {
				out = append(out, Leftover{Kind: GCTempFile, Path: t.Path, Bytes: t.Size,
					Reason: g.what + " that was cut short (" + core.RoundAge(now.Sub(t.ModTime)) + " old)"})
			}
		}
	}

	out = append(out, a.verifyLeftovers(false)...)
	out = append(out, a.Host.RetiredLeftovers()...)
	out = append(out, a.Host.QueuedEnvLeftovers()...)
	dead, missing, missingWt := a.deadCreates()
	out = append(out, dead...)
	if len(missing) == 0 && len(missingWt) == 0 {
		return out
	}

	// A directory without a creator marker: only the lock tells. Bounded:
	// doctor must not hang behind a long land. No subprocess runs under
	// this lock: it only looks at directories.
	lock, err := a.Store.Lock(min(a.LockTimeout, 3*time.Second))
	if err != nil {
		return out
	}
	defer lock.Unlock()

	for _, id := range missing {
		if a.Store.MissingMeta(id) {
			out = append(out, a.invocationDirLeftover(id))
		}
	}

	for _, id := range missingWt {
		if a.Store.MissingWorktreeMeta(id) {
			out = append(out, a.worktreeDirLeftover(id))
		}
	}

	return out
}

// deadCreates finds the record directories without meta.json: those whose
// creator (store.CreatorFile) is gone are leftovers at once, whatever
// holds the lock; those whose creator still runs are creates in progress,
// left out; the rest (no marker) are returned by id for the lock to tell.
func (a *Tidier) deadCreates() (dead []Leftover, unknownInv, unknownWt []string) {
	ids, _ := store.ReadIDDirs(a.Store.InvocationsDir())
	for _, id := range ids {
		if !a.Store.MissingMeta(id) {
			continue
		}

		switch core.CreatorOf(a.Store.InvocationDir(id)) {
		case core.CreatorGone:
			dead = append(dead, a.invocationDirLeftover(id))
		case core.CreatorUnknown:
			unknownInv = append(unknownInv, id)
		}
	}

	wids, _ := store.ReadIDDirs(a.Store.IntegrationWorktreesDir())
	for _, id := range wids {
		if !a.Store.MissingWorktreeMeta(id) {
			continue
		}

		switch core.CreatorOf(a.Store.IntegrationWorktreeDir(id)) {
		case core.CreatorGone:
			dead = append(dead, a.worktreeDirLeftover(id))
		case core.CreatorUnknown:
			unknownWt = append(unknownWt, id)
		}
	}

	return dead, unknownInv, unknownWt
}

func (a *Tidier) invocationDirLeftover(id string) Leftover {
	dir := a.Store.InvocationDir(id)
	return Leftover{Kind: GCInvocationDir, Invocation: id, Path: dir, Bytes: store.DirSize(dir),
		Reason: "no meta.json: left by an agent start that was killed"}
}

func (a *Tidier) worktreeDirLeftover(id string) Leftover {
	dir := a.Store.IntegrationWorktreeDir(id)
	reason := "no meta.json: left by a worktree create that was killed"
	if c, ok := store.ReadCreator(dir); ok && c.Adopt != nil {
		reason = "no meta.json: left by a worktree adopt of " + c.Adopt.Tree + " that was killed (its marker there goes too)"
	}
	return Leftover{Kind: GCWorktreeDir, Invocation: id, Path: dir, Bytes: store.DirSize(dir), Reason: reason}
}

// undoKilledAdopt takes back what a killed `worktree adopt` (record
// directory dir) wrote into the user's tree, unless a record adopts that
// tree now (the user removed the marker and adopted it again).
func (a *Tidier) undoKilledAdopt(dir string) error {
	c, ok := store.ReadCreator(dir)
	if !ok || c.Adopt == nil {
		return nil
	}

	wts, _ := a.Store.ScanWorktrees()
	for _, e := range wts {
		if e.Record != nil && e.Record.State == store.StatePresent && e.Record.TreePath == c.Adopt.Tree {
			return nil
		}
	}

	return a.Host.UndoAdoptMarks(*c.Adopt)
}

// startInProgress tells whether invocation id is being created right now:
// its directory has no meta.json yet and its creator still runs. Its
// sandbox and branch are not orphans.
func (a *Tidier) startInProgress(id string) bool {
	return a.Store.MissingMeta(id) && core.CreatorOf(a.Store.InvocationDir(id)) == core.CreatorAlive
}

// orphanBranch is a branch a killed `worktree create` (agency/<name>-<short>
// of a record directory without meta.json) or a killed `agent start`
// (agency/sandbox-<id> of no invocation record) left behind.
type orphanBranch struct {
	Name       string // without refs/heads/
	ID         string // the invocation or worktree id it was made for
	Reason     string
	MetaPath   string // the record whose absence makes it an orphan
	Elsewhere  bool   // every commit of it is on another branch
	CheckedOut string // a worktree that has it checked out
}

// orphanBranches lists the branches killed creates and starts left; known
// tells whether an invocation has a record (or a broken one).
func (a *Tidier) orphanBranches(ctx context.Context, left []Leftover, known func(inv string) bool) []orphanBranch {
	claimed := map[string]bool{}
	if wts, err := a.Store.ScanWorktrees(); err == nil {
		for _, w := range wts {
			if w.Record != nil {
				claimed[w.Record.Branch] = true
			}
		}
	}

	checkedOut := map[string]string{}
	if wts, err := a.Repo.Worktrees(ctx); err == nil {
		for _, w := range wts {
			if w.Branch != "" {
				checkedOut[strings.TrimPrefix(w.Branch, "refs/heads/")] = w.Path
			}
		}
	}

	var out []orphanBranch
	addRef := func(ref gitcore.Ref, id, meta, reason string) {
		name := strings.TrimPrefix(ref.Name, "refs/heads/")
		if claimed[name] {
			return
		}
		ok, err := a.Repo.ReachableFromOtherBranch(ctx, ref.Name, ref.Name)
		out = append(out, orphanBranch{Name: name, ID: id, Reason: reason, MetaPath: meta,
			Elsewhere: err == nil && ok, CheckedOut: checkedOut[name]})
	}
	if refs, err := a.Repo.ForEachRef(ctx, "refs/heads/"+store.SandboxBranch("*")); err == nil {
		for _, ref := range refs {
			id := strings.TrimPrefix(ref.Name, "refs/heads/"+store.SandboxBranch(""))
			if !store.ValidID(id) || known(id) || a.startInProgress(id) {
				continue
			}
			addRef(ref, id, a.Store.InvocationMetaPath(id), "no invocation record: left by an agent start that was killed")
		}
	}

	for _, l := range left {
		if l.Kind != GCWorktreeDir {
			continue
		}

		refs, err := a.Repo.ForEachRef(ctx, "refs/heads/agency/*-"+store.ShortID(l.Invocation))
		if err != nil {
			continue
		}

		for _, ref := range refs {
			rest := strings.TrimPrefix(ref.Name, "refs/heads/agency/")
			if store.ValidID(strings.TrimPrefix(rest, "sandbox-")) {
				continue // a sandbox branch
			}
			addRef(ref, l.Invocation, a.Store.IntegrationWorktreeMetaPath(l.Invocation), "no worktree record: left by a worktree create that was killed")
		}
	}

	return out
}

// removeLeftover removes one leftover, looking again first (the caller
// holds the repo lock).
func (a *Tidier) removeLeftover(it *GCItem) error {
	if it.Kind == GCInvocationDir {
		if !a.Store.MissingMeta(it.Invocation) {
			return errs.New(errs.EInternal, "", "invocation %s has a record now; left alone", it.Invocation)
		}
		return store.RemoveAllInside(a.Store.InvocationsDir(), a.Store.InvocationDir(it.Invocation))
	}

	fi, err := os.Lstat(it.Target)
	if err != nil {
		return nil // gone already
	}

	if !fi.Mode().IsRegular() || !staleTemp(it.Target, fi.ModTime(), a.Now()) {
		it.Kept, it.KeptWhy = true, "written to since the plan: not stale"
		return nil
	}

	if err := os.Remove(it.Target); err != nil && !os.IsNotExist(err) {
		return errs.IO("remove", it.Target, err)
	}

	return nil
}
