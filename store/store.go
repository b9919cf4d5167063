// Package store owns git-agency's records on disk: data-dir resolution,
// repo ids, path helpers, record types, atomic JSON, the repo lock, id
// generation, scanning (with broken entries), the name/id/prefix resolver,
// and events.jsonl. It never runs git or other processes.
package store

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/git-agency/git-agency/errs"
)

// SchemaVersion is written into every record.
const SchemaVersion = "1.0"

// DataDir resolves the data directory: $AGENCY_DATA_DIR, else the
// configured agency.dataDir, else $XDG_DATA_HOME/agency, else
// ~/.local/share/agency. The result is absolute.
//
// A relative agency.dataDir is refused (E_CONFIG): relative to the current
// directory it would name a different data directory from every
// subdirectory and worktree, and relative to the repository it would put
// sandboxes inside the user's own working tree. It must be absolute or
// start with ~/.
//
// A relative $AGENCY_DATA_DIR (not starting with ~/ either) is refused
// for the same reason, and a relative $XDG_DATA_HOME is ignored, as the
// XDG base directory rules say.
func DataDir(getenv func(string) string, configured string) (string, error) {
	dir, err := chosenDataDir(getenv, configured)
	if err != nil {
		return "", err
	}

	if len(dir) > 1 && dir[0] == '~' && dir[1] == '/' {
		if home := getenv("HOME"); home != "" {
			dir = filepath.Join(home, dir[2:])
		}
	}

	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", errs.IO("resolve data dir", dir, err)
	}

	return abs, nil
}

// chosenDataDir is the data directory as given (~/ not yet expanded): the
// environment, the configuration, XDG_DATA_HOME, or the default under HOME.
func chosenDataDir(getenv func(string) string, configured string) (string, error) {
	if dir := getenv("AGENCY_DATA_DIR"); dir != "" {
		if !homeOrAbs(dir) {
			return "", errs.DataDirRelative(dir)
		}
		return dir, nil
	}

	if configured != "" {
		if !homeOrAbs(configured) {
			return "", errs.Config("agency.dataDir", configured, "an absolute path, or one that starts with ~/")
		}
		return configured, nil
	}

	if x := getenv("XDG_DATA_HOME"); x != "" && filepath.IsAbs(x) {
		return filepath.Join(x, "agency"), nil
	}

	home := getenv("HOME")
	if home == "" {
		h, err := os.UserHomeDir()
		if err != nil {
			return "", errs.New(errs.EConfig, "set AGENCY_DATA_DIR or 'git config agency.dataDir <dir>'", "cannot find a data directory: no HOME")
		}
		home = h
	}

	return filepath.Join(home, ".local", "share", "agency"), nil
}

func homeOrAbs(dir string) bool { return filepath.IsAbs(dir) || strings.HasPrefix(dir, "~/") }

// repoID is a stable id for a repository: a hash of its common git
// directory (absolute, symlinks resolved).
func repoID(commonDir string) string {
	sum := sha256.Sum256([]byte(commonDir))
	return hex.EncodeToString(sum[:])[:16]
}

// Store is the data directory of one repository.
type Store struct {
	DataDir string
	RepoID  string
	// MovedFrom is set when the repository's records were found under the
	// id of the path it had before it was moved (see findMoved): the
	// caller relinks (Relink, and `git worktree repair` of its trees).
	MovedFrom string

	// held counts the repo locks this Store holds (Lock, Unlock).
	held atomic.Int32
	// finished keeps the finished-record cache decoded between scans of a
	// long-lived process (watch scans every second); nil: not kept.
	finished *finishedMemo
	// memo keeps files decoded between reads of a long-lived process
	// (memo.go); nil: not kept.
	memo *fileMemo
	// WriteFault, when set, is asked before every record write and event
	// append that needs new space, and makes it fail with its error
	// (tests: a full disk). In-place rewrites (WriteOutcome) are not.
	WriteFault func(path string) error
}

// Open returns the store for a repository and makes sure its directory,
// repo.json and the identity file in its git directory exist.
func Open(dataDir, commonDir string) (*Store, error) {
	s := &Store{DataDir: dataDir, RepoID: repoID(commonDir), finished: &finishedMemo{}, memo: &fileMemo{}}
	if id, from := s.findMoved(commonDir); id != "" {
		// The identity file names the records, whatever the path hashes to.
		s.RepoID, s.MovedFrom = id, from
	}

	if err := os.MkdirAll(s.RepoDir(), 0o700); err != nil {
		return nil, errs.IO("create", s.RepoDir(), err)
	}

	if _, err := os.Stat(s.RepoJSONPath()); os.IsNotExist(err) {
		// The ignore file first: a kill between the two writes leaves no
		// repo.json, so the next command makes both.
		s.ignoreDataDir()
		rec := RepoRecord{SchemaVersion: SchemaVersion, RepoID: s.RepoID, CommonDir: commonDir,
			CreatedAt: time.Now().UTC().Format(time.RFC3339)}
		if err := writeJSONAtomic(s.RepoJSONPath(), rec); err != nil {
			return nil, err
		}
	}

	s.keepIdentity(commonDir)
	return s, nil
}

// dataDirIgnore is the name of the data directory's own ignore file.
const dataDirIgnore = ".gitignore"

// ignoreDataDir writes a .gitignore of "*" at the data directory's root
// (once: when a repository's records are first made), so that a data
// directory inside a git work tree (a project-local AGENCY_DATA_DIR, a
// home directory under version control) is invisible to that tree's git:
// `git add -A` there would otherwise take the sandboxes as embedded
// repositories and commit the records and logs. A .gitignore outside a
// tree's own directories is never read by it, so our trees are unchanged.
// Best effort: git-agency works without it.
func (s *Store) ignoreDataDir() {
	p := filepath.Join(s.DataDir, dataDirIgnore)
	if _, err := os.Lstat(p); os.IsNotExist(err) {
		_ = WriteFileAtomic(p, []byte("# git-agency's data directory: never part of a repository\n*\n"), 0o644) // best effort (above)
	}
}

// RepoRecord is repo.json: it traces a repo id back to its repository.
type RepoRecord struct {
	SchemaVersion string `json:"schema_version"`
	RepoID        string `json:"repo_id"`
	CommonDir     string `json:"common_dir"`
	CreatedAt     string `json:"created_at"`
	// MovedFrom is the common dir before the repository was last moved.
	MovedFrom string `json:"moved_from,omitempty"`
}

func (s *Store) reposDir() string     { return filepath.Join(s.DataDir, "repos") }
func (s *Store) RepoDir() string      { return filepath.Join(s.DataDir, "repos", s.RepoID) }
func (s *Store) RepoJSONPath() string { return filepath.Join(s.RepoDir(), "repo.json") }
func (s *Store) lockPath() string     { return filepath.Join(s.RepoDir(), ".lock") }

// Integration worktrees: integration_worktrees/<id>/{meta.json,tree/}.

func (s *Store) IntegrationWorktreesDir() string {
	return filepath.Join(s.RepoDir(), "integration_worktrees")
}
func (s *Store) IntegrationWorktreeDir(id string) string {
	return filepath.Join(s.IntegrationWorktreesDir(), id)
}
func (s *Store) IntegrationWorktreeMetaPath(id string) string {
	return filepath.Join(s.IntegrationWorktreeDir(id), "meta.json")
}
func (s *Store) IntegrationWorktreeTreePath(id string) string {
	return filepath.Join(s.IntegrationWorktreeDir(id), "tree")
}

// Sandboxes: sandboxes/<inv>/{checkpoints.json,logs/,tree/}.

func (s *Store) SandboxesDir() string         { return filepath.Join(s.RepoDir(), "sandboxes") }
func (s *Store) SandboxDir(inv string) string { return filepath.Join(s.SandboxesDir(), inv) }
func (s *Store) SandboxTreePath(inv string) string {
	return filepath.Join(s.SandboxDir(inv), "tree")
}
func (s *Store) SandboxLogsDir(inv string) string { return filepath.Join(s.SandboxDir(inv), "logs") }
func (s *Store) CheckpointsPath(inv string) string {
	return filepath.Join(s.SandboxDir(inv), "checkpoints.json")
}

// Invocations: invocations/<inv>/{meta.json,events.jsonl,supervisor.log}.

func (s *Store) InvocationsDir() string          { return filepath.Join(s.RepoDir(), "invocations") }
func (s *Store) InvocationDir(inv string) string { return filepath.Join(s.InvocationsDir(), inv) }
func (s *Store) InvocationMetaPath(inv string) string {
	return filepath.Join(s.InvocationDir(inv), "meta.json")
}
func (s *Store) EventsPath(inv string) string {
	return filepath.Join(s.InvocationDir(inv), "events.jsonl")
}
func (s *Store) SupervisorLogPath(inv string) string {
	return filepath.Join(s.InvocationDir(inv), "supervisor.log")
}

// SnapshotRefPrefix is the ref namespace of an invocation's checkpoints.
func SnapshotRefPrefix(inv string) string { return "refs/agency/snapshots/" + inv + "/" }

// KeptRefPrefix is the ref namespace of commits kept from an invocation's
// sandbox when it was removed (a detached HEAD no ref reached).
func KeptRefPrefix(inv string) string { return "refs/agency/kept/" + inv + "/" }

// SandboxBranch is the branch of an invocation's sandbox.
func SandboxBranch(inv string) string { return "agency/sandbox-" + inv }
