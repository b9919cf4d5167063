package gitcore

import (
	"encoding/hex"
	"io"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/git-agency/git-agency/gitcore/internal/index"
	"github.com/git-agency/git-agency/gitcore/internal/repofiles"
)

// No git of ours looks inside a submodule. A status with
// --ignore-submodules=none runs `git status` in every submodule, which
// reads the submodule's own configuration and runs the filters, textconv
// and fsmonitor it names, as the user: in a sandbox, that configuration
// is the agent's (a repository it made in its tree, or cloned into its
// worktree's modules/), written inside the wall and run outside it. So
// every status of a tree takes submodules as statusSubmodules says (the
// commit checked out in one still counts), and the files changed inside
// them are read from each submodule's index and files, running nothing
// (submoduleDirt): the Sub letters keep meaning what git's own would.
const statusSubmodules = "--ignore-submodules=dirty"

// Bounds of one submodule read: past them it says "modified" rather than
// read on (a status would cost as much).
const (
	maxSubmoduleDepth  = 8
	maxSubmoduleHashed = 256 << 20 // bytes of content hashed
	maxSubmoduleIndex  = 256 << 20 // bytes of one index file
	maxUntrackedWalk   = 200000    // entries walked looking for an untracked file
)

// withSubmoduleDirt completes st, a status of the tree taken with
// statusSubmodules, with what --ignore-submodules=none would have said of
// the files inside its submodules: the M (tracked files changed) and U
// (untracked files; only when untracked) letters of a submodule's Sub
// field, and an entry for a submodule whose only change is those files.
// keep, when not nil, limits the submodules looked at (a status limited
// to paths).
func (t *Tree) withSubmoduleDirt(st []StatusEntry, untracked bool, keep func(string) bool) []StatusEntry {
	links := t.gitlinks()
	if len(links) == 0 {
		return st
	}
	at := map[string]int{}
	for i, e := range st {
		if e.Kind == StatusChanged {
			at[e.Path] = i
		}
	}
	excludes := ""
	if untracked {
		excludes = t.repo.excludesFile()
	}

	var added []StatusEntry
	for _, l := range links {
		if keep != nil && !keep(l.path) {
			continue
		}
		d := submoduleDirt(filepath.Join(t.Path, filepath.FromSlash(l.path)), untracked, excludes, 0)
		if !d.modified && !d.untracked {
			continue
		}
		if i, ok := at[l.path]; ok && len(st[i].Sub) == 4 && st[i].Sub[0] == 'S' {
			st[i].Sub = st[i].Sub[:2] + d.letters()
			continue
		}
		if _, ok := at[l.path]; ok {
			continue // a submodule deleted or replaced: its files are not its
		}
		added = append(added, StatusEntry{Kind: StatusChanged, XY: ".M", Path: l.path,
			Sub: "S." + d.letters(), IndexMode: "160000", IndexOID: l.oid})
	}
	return mergeStatus(st, added)
}

// mergeStatus puts added (changed entries, in path order) among st's
// changed entries, in path order, before its untracked and ignored ones.
func mergeStatus(st, added []StatusEntry) []StatusEntry {
	if len(added) == 0 {
		return st
	}
	out := make([]StatusEntry, 0, len(st)+len(added))
	for _, e := range st {
		for len(added) > 0 && (e.Kind == StatusUntracked || e.Kind == StatusIgnored || added[0].Path < e.Path) {
			out = append(out, added[0])
			added = added[1:]
		}
		out = append(out, e)
	}
	return append(out, added...)
}

// dirt is what submoduleDirt found in a submodule.
type dirt struct{ modified, untracked bool }

func (d dirt) letters() string {
	b := []byte("..")
	if d.modified {
		b[0] = 'M'
	}
	if d.untracked {
		b[1] = 'U'
	}
	return string(b)
}

// gitlink is a submodule of the index: its path and the commit recorded.
type gitlink struct{ path, oid string }

// gitlinks are the tree's index's gitlinks (stage 0).
func (t *Tree) gitlinks() []gitlink {
	gitDir, ok := repofiles.WorktreeGitDir(t.Path)
	if !ok {
		return nil
	}
	data, ok := readRegular(filepath.Join(gitDir, "index"), maxSubmoduleIndex)
	if !ok {
		return nil
	}
	var out []gitlink
	forEntries(data, len(t.headCommit(gitDir))/2, func(e *index.Entry) {
		if e.Gitlink() && e.Stage() == 0 {
			out = append(out, gitlink{path: string(e.Path), oid: hex.EncodeToString(e.OID)})
		}
	})
	return out
}

// forEntries calls fn with each entry of the index file data, whose ids
// are oidLen bytes (when oidLen is neither SHA-1's nor SHA-256's, the
// one the whole file reads with); false when the file is not one it
// reads. The entry is valid only during the call.
func forEntries(data []byte, oidLen int, fn func(*index.Entry)) bool {
	if oidLen != 20 && oidLen != 32 {
		oidLen = 32
		if forEntries(data, 20, func(*index.Entry) {}) {
			oidLen = 20
		}
	}
	it, ok := index.Entries(data, oidLen)
	if !ok {
		return false
	}
	for it.Next() {
		fn(it.Entry())
	}
	_, extOK := it.Extensions()
	return it.OK() && extOK
}

// readRegular reads the regular file at p (never through a link, never
// blocking on a FIFO), up to max bytes; ok is false otherwise.
func readRegular(p string, max int64) ([]byte, bool) {
	b, _, ok := readRegularStat(p, max)
	return b, ok
}

// readRegularStat is readRegular, with the file's modification time (in
// seconds) when it was opened.
func readRegularStat(p string, max int64) ([]byte, int64, bool) {
	f, err := openRegular(p)
	if err != nil {
		return nil, 0, false
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || fi.Size() > max {
		return nil, 0, false
	}
	b := make([]byte, fi.Size())
	n, err := io.ReadFull(f, b)
	return b[:n], fi.ModTime().Unix(), err == nil
}

// openRegular opens p for reading if it is a regular file, not through a
// link and without blocking.
func openRegular(p string) (*os.File, error) {
	fd, err := unix.Open(p, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(fd), p)
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		f.Close()
		return nil, os.ErrInvalid
	}
	return f, nil
}

// submoduleGitDir is the git directory of the submodule checked out at
// dir: its .git directory, or the one its .git file names; ok is false
// when it has none (not checked out).
func submoduleGitDir(dir string) (string, bool) {
	p := filepath.Join(dir, ".git")
	fi, err := os.Lstat(p)
	if err != nil {
		return "", false
	}
	if fi.IsDir() {
		return p, true
	}
	b, ok := readRegular(p, 4096)
	if !ok {
		return "", false
	}
	target, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir: ")
	if !ok || target == "" {
		return "", false
	}
	if !filepath.IsAbs(target) {
		target = filepath.Join(dir, target)
	}
	return target, true
}
