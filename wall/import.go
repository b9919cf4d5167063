package wall

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/git-agency/git-agency/errs"
	"github.com/git-agency/git-agency/gitcore"
	"github.com/git-agency/git-agency/store"
)

// importReflog is the reflog message of a sandbox branch moved to the
// commit its walled agent made.
const importReflog = "agency: commit from the wall"

// ImportShadow brings what a walled agent's git wrote into its shadow git
// directory into the repository: every object the repository lacks
// (hashed again on the way in: gitcore.ImportObjects) and every Git LFS
// object (importLFS: under its true SHA-256 only), then the sandbox
// branch, moved to the shadow's tip by compare and swap once everything
// it reaches is here. It returns whether the branch moved. A shadow that
// does not exist (an unwalled invocation) imports nothing. Only the
// sandbox branch is imported: the agent's other branches, tags, stash and
// remote-tracking refs stay in the shadow.
func ImportShadow(ctx context.Context, repo *gitcore.Repo, shadow, branch string) (bool, error) {
	root, err := os.OpenRoot(shadow)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, errs.IO("open", shadow, err)
	}
	defer root.Close()

	if !shadowAlternatesIntact(root, repo.ObjectsDir()) {
		return false, errs.WallFailed(fmt.Sprintf("%s: the agent changed its object directory's alternates; nothing was imported", shadow))
	}

	ids, err := shadowObjects(ctx, repo, root)
	if err != nil {
		return false, err
	}

	missing, err := repo.MissingObjects(ctx, ids)
	if err != nil {
		return false, err
	}
	if err := repo.ImportObjects(ctx, filepath.Join(shadow, "objects"), missing); err != nil {
		return false, err
	}
	importLFS(root, repo.CommonDir)

	tip, ok := shadowTip(root, branch)
	if !ok || tip == lastImported(shadow) {
		return false, nil
	}

	ref := "refs/heads/" + branch
	old, err := repo.RevParse(ctx, ref)
	if err != nil || old == tip {
		return false, err
	}
	if err := repo.Connected(ctx, tip, old); err != nil {
		return false, errs.WallFailed(fmt.Sprintf("the sandbox branch's commit %s from the wall is incomplete (%v); it was not imported", tip, err))
	}

	moved, err := moveToTip(ctx, repo, ref, tip, old)
	if err != nil {
		return false, err
	}

	return moved, noteImported(shadow, tip)
}

func isAncestor(ctx context.Context, repo *gitcore.Repo, a, b string) bool {
	ok, err := repo.IsAncestor(ctx, a, b)
	return err == nil && ok
}

// casAttempts bounds moveToTip's compare-and-swaps.
const casAttempts = 5

// moveToTip moves ref from old to tip by compare and swap. When the swap
// loses, the ref is read again: at tip already (another import of the
// same commit won), it is done; at an ancestor of tip (an import of an
// earlier commit of the agent's, or the same value while another git held
// the ref's lock), the swap is tried again from there. Anything else (the
// ref moved elsewhere: a checkpoint applied, a reset made outside) is the
// swap's error. moved is false when another import moved it.
func moveToTip(ctx context.Context, repo *gitcore.Repo, ref, tip, old string) (moved bool, err error) {
	for attempt := 1; ; attempt++ {
		err = repo.MoveRef(ctx, ref, tip, old, importReflog)
		if err == nil {
			return true, nil
		}

		cur, rerr := repo.RevParse(context.WithoutCancel(ctx), ref)
		switch {
		case rerr == nil && cur == tip:
			return false, nil
		case attempt >= casAttempts || rerr != nil || ctx.Err() != nil:
			return false, err
		case cur != old && !isAncestor(ctx, repo, cur, tip):
			return false, err
		case cur == old:
			// Another git holds the ref's lock (git waits only 100 ms).
			time.Sleep(time.Duration(attempt) * 100 * time.Millisecond)
		}

		old = cur
	}
}

// importedPath is the file beside a shadow (outside it, so out of the
// agent's reach) that holds the shadow tip last brought in, or set from
// the repository's branch: a tip the agent has not moved since is not
// brought in again, so that a reset made outside (a checkpoint applied)
// stands.
func importedPath(shadow string) string { return shadow + "-imported" }

func lastImported(shadow string) string {
	b, _ := os.ReadFile(importedPath(shadow))
	return strings.TrimSpace(string(b))
}

func noteImported(shadow, tip string) error {
	return store.WriteFileAtomic(importedPath(shadow), []byte(tip+"\n"), 0o644)
}

// shadowObjects are the ids of the objects in the shadow's own store: its
// loose objects (by name; only the regular files) and those its pack
// indexes list. Whatever they hold is hashed again on import.
func shadowObjects(ctx context.Context, repo *gitcore.Repo, root *os.Root) ([]string, error) {
	dir, err := root.Open("objects")
	if err != nil {
		return nil, err
	}

	names, err := dir.Readdirnames(-1)
	dir.Close()
	if err != nil {
		return nil, err
	}

	var ids []string
	for _, n := range names {
		if len(n) != 2 || !isHex(n) {
			continue
		}

		sub, err := root.Open(filepath.Join("objects", n))
		if err != nil {
			continue
		}

		ents, _ := sub.ReadDir(-1)
		sub.Close()

		for _, e := range ents {
			if e.Type().IsRegular() && isObjectID(n+e.Name()) {
				ids = append(ids, n+e.Name())
			}
		}
	}

	packed, err := shadowPacked(ctx, repo, root)
	return append(ids, packed...), err
}

// shadowPacked are the ids the shadow's pack indexes list.
func shadowPacked(ctx context.Context, repo *gitcore.Repo, root *os.Root) ([]string, error) {
	dir, err := root.Open(filepath.Join("objects", "pack"))
	if err != nil {
		return nil, nil
	}

	names, _ := dir.Readdirnames(-1)
	dir.Close()
	var ids []string
	for _, n := range names {
		if !strings.HasSuffix(n, ".idx") {
			continue
		}

		f, err := openShadowFile(root, filepath.Join("objects", "pack", n))
		if err != nil {
			continue
		}

		got, err := repo.PackIndexIDs(ctx, f)
		f.Close()
		if err != nil {
			continue
		}

		ids = append(ids, got...)
	}

	return ids, nil
}

func isHex(s string) bool {
	for _, c := range s {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return s != ""
}
