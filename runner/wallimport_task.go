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
type importTask struct {
	s      *Supervisor
	shadow string
	branch string
	stamps []string
	done   chan struct{}
}

func newImportTask(s *Supervisor, rec *store.InvocationRecord) BackgroundTask {
	branch := strings.TrimPrefix(rec.SandboxBranch, "refs/heads/")
	shadow := wall.ShadowDir(s.Store, s.Invocation)
	t := &importTask{s: s, shadow: shadow, branch: branch, done: make(chan struct{})}
	if gitDir, err := wall.SandboxGitDir(rec.SandboxPath, s.Repo.CommonDir); err == nil {
		t.stamps = append(t.stamps, filepath.Join(gitDir, "index"))
	}
	t.stamps = append(t.stamps, filepath.Join(shadow, "packed-refs"),
		filepath.Join(shadow, "refs", "heads", filepath.FromSlash(branch)))
	return t
}

func (t *importTask) Start(ctx context.Context) {
	go func() {
		defer close(t.done)
		tick := time.NewTicker(importInterval)
		defer tick.Stop()
		last := t.stamp()
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
			if _, err := wall.ImportShadow(ctx, t.s.Repo, t.shadow, t.branch); err != nil {
				t.s.logf("import from the wall: %v", err)
				continue
			}
			last = now
		}
	}()
}

// Stop waits for the loop; the final checkpoint imports what is left.
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
