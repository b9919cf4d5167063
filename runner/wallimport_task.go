package runner

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/git-agency/git-agency/store"
	"github.com/git-agency/git-agency/wall"
)

// importInterval is how often a walled agent's supervisor looks for new
// commits in its shadow git directory.
const importInterval = time.Second

// importTask imports a walled agent's commits (wall.ImportShadow) soon after
// it makes them, not only at the next checkpoint: until then the
// sandbox's index and HEAD reflog, which the repository's own `git gc`
// reads, name objects only the shadow has. It looks at two stamps a
// second (the worktree's index and the shadow's packed-refs and
// sandbox ref) and runs git only when one changed.
//
// An import is never cut off: it runs under the sandbox's checkpoint lock
// (so never beside a checkpoint's own import, nor the final one), with a
// context the run's end does not cancel. Killed in the middle of its
// compare-and-swap, git would leave the sandbox branch's ref locked, and
// the final import, and every later one, would fail on it.
type importTask struct {
	s        *Supervisor
	shadow   string
	branch   string
	stamps   []string
	interval time.Duration
	done     chan struct{}
}

// importTimeout bounds one import of the task.
const importTimeout = 5 * time.Minute

func newImportTask(s *Supervisor, rec *store.InvocationRecord) *importTask {
	branch := strings.TrimPrefix(rec.SandboxBranch, "refs/heads/")
	shadow := wall.ShadowDir(s.Store, s.Invocation)
	t := &importTask{s: s, shadow: shadow, branch: branch, interval: importInterval, done: make(chan struct{})}
	if gitDir, err := wall.SandboxGitDir(rec.SandboxPath, s.Repo.CommonDir); err == nil {
		t.stamps = append(t.stamps, filepath.Join(gitDir, "index"))
	}
	t.stamps = append(t.stamps, filepath.Join(shadow, "packed-refs"),
		filepath.Join(shadow, "refs", "heads", filepath.FromSlash(branch)))
	return t
}

func (t *importTask) Start(ctx context.Context) {
	last := t.stamp()
	go func() {
		defer close(t.done)
		tick := time.NewTicker(t.interval)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			now := t.stamp()
			if now == last {
				continue
			}
			if t.importOnce(ctx) {
				last = now
			}
		}
	}()
}

// importOnce imports what the shadow holds, and reports whether that is
// done (false: try again at the next change or tick).
func (t *importTask) importOnce(ctx context.Context) bool {
	lock, err := t.s.Store.LockCheckpoints(t.s.Invocation, 0)
	if err != nil {
		return false // a checkpoint is taken, and imports first
	}
	defer lock.Unlock()
	ictx, cancel := context.WithTimeout(context.WithoutCancel(ctx), importTimeout)
	defer cancel()
	if _, err := wall.ImportShadow(ictx, t.s.Repo, t.shadow, t.branch); err != nil {
		t.s.logf("import from the wall: %v", err)
		return false
	}
	return true
}

// Stop waits for the loop, and for an import it is in; the final
// checkpoint imports what is left.
func (t *importTask) Stop(context.Context) { <-t.done }

// stamp is the size and modification time of each stamp file.
func (t *importTask) stamp() string {
	var b strings.Builder
	for _, p := range t.stamps {
		if fi, err := os.Lstat(p); err == nil {
			b.WriteString(fi.ModTime().String() + "/" + fi.Name())
			b.WriteByte(byte(fi.Size()))
		}
		b.WriteByte(0)
	}
	return b.String()
}
