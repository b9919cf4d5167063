package gitcore

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/git-agency/git-agency/gitcore/internal/index"
)

// git's status takes a file as unchanged from its stat data, but for a
// racily clean one: modified in the second its index was written or later
// (git as packaged for Linux is built without USE_NSEC and compares whole
// seconds here), whose content it hashes. A fresh checkout or an
// `update-index --refresh` leaves many of those, and TrackedUnchanged
// hashed them all, or, past maxHashed, left the tree to a `git status`
// that (GIT_OPTIONAL_LOCKS=0) writes no refreshed index: every quiet
// `agent ls` paid the status again.
//
// So a proof is remembered. When every racily clean entry's file was
// found to hold its entry's content (by TrackedUnchanged's hashing, or by
// a HasTrackedChanges that found the tree clean), the worktree's git
// directory keeps racyMemoName: the index's stamp, and a time P taken
// from the file system before the content was read (the mtime of the
// memo's temp file, written first: the clock that files' mtimes come
// from). While the index keeps that stamp, an entry whose file's mtime is
// before P (to the nanosecond) is not racy any more: its file held its
// content after P, and a later write would have given it an mtime of P
// or later, which the entry's stat data does not have.
const racyMemoName = "agency-racy-clean"

// racyRule says which entries are racily clean.
type racyRule struct {
	index      uint32 // the index's mtime, in seconds
	proven     bool   // a memo of this index holds P
	pSec, pNse uint32
}

func (r racyRule) racy(e *statEntry) bool {
	if e.mtime < r.index {
		return false
	}
	return !r.proven || e.mtime > r.pSec || (e.mtime == r.pSec && e.mtim >= r.pNse)
}

// racyRuleFor is the rule for the index f of the worktree whose git
// directory is gitDir: git's, or past it where the memo holds a proof.
func racyRuleFor(gitDir string, f *index.File) racyRule {
	r := racyRule{index: uint32(f.MtimeSec)}
	b, ok := readSmallFile(filepath.Join(gitDir, racyMemoName), 4096)
	if !ok || f.Stamp == "" {
		return r
	}

	stamp, when, _ := strings.Cut(strings.TrimSuffix(string(b), "\n"), "\n")
	sec, nsec, _ := strings.Cut(when, ".")
	s, err1 := strconv.ParseUint(sec, 10, 32)
	n, err2 := strconv.ParseUint(nsec, 10, 32)
	if stamp != f.Stamp || err1 != nil || err2 != nil {
		return r
	}

	r.proven, r.pSec, r.pNse = true, uint32(s), uint32(n)
	return r
}

// racyProof is a proof begun: the memo's temp file, written before any
// content is read, whose mtime is P.
type racyProof struct {
	tmp, gitDir, stamp string
	when               string
}

// beginRacyProof starts a proof for the index (its stamp) of the worktree
// whose git directory is gitDir; nil when it cannot (the proof is then
// not remembered).
func beginRacyProof(gitDir, stamp string) *racyProof {
	if stamp == "" {
		return nil
	}

	f, err := os.CreateTemp(gitDir, SnapshotIndexPrefix+strconv.Itoa(os.Getpid())+"-racy-*")
	if err != nil {
		return nil
	}

	fi, err := f.Stat()
	f.Close()
	if err != nil {
		os.Remove(f.Name())
		return nil
	}

	t := fi.ModTime()
	return &racyProof{tmp: f.Name(), gitDir: gitDir, stamp: stamp, when: fmt.Sprintf("%d.%09d", t.Unix(), t.Nanosecond())}
}

// end keeps the proof as the memo when proven and the index still has the
// stamp it began with, and removes its temp file otherwise.
func (p *racyProof) end(proven bool) {
	if p == nil {
		return
	}
	if proven && index.StampOf(filepath.Join(p.gitDir, "index")) == p.stamp {
		err := os.WriteFile(p.tmp, []byte(p.stamp+"\n"+p.when+"\n"), 0o644)
		if err == nil && os.Rename(p.tmp, filepath.Join(p.gitDir, racyMemoName)) == nil {
			return
		}
	}
	os.Remove(p.tmp)
}
