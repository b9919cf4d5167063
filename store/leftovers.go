package store

import (
	"os"
	"path/filepath"
	"strings"
	"time"
)

// TempFile is a temp file a killed writer left behind (see AtomicTemps,
// FilesIn).
type TempFile struct {
	Path    string
	Size    int64
	ModTime time.Time
}

// AtomicTempMarker precedes the writer's pid in WriteFileAtomic's temp file
// names (".<name>.tmp-<pid>-<random>").
const AtomicTempMarker = ".tmp-"

// IsAtomicTemp tells whether a file name is one of WriteFileAtomic's temp
// files (".<name>.tmp-<pid>-<random>", or ".<name>.tmp-<random>" from
// before the pid was recorded).
func IsAtomicTemp(name string) bool {
	return strings.HasPrefix(name, ".") && strings.Contains(name, AtomicTempMarker)
}

// AtomicTemps lists WriteFileAtomic's temp files in the directories where
// records are written: the repo directory (repo.json), every
// integration_worktrees/<id>/, invocations/<id>/, sandboxes/<id>/ and
// sandboxes/<id>/logs/, and the data directory's own .gitignore's
// (ignoreDataDir) at its root, where nothing else is taken: the data
// directory may be one the user keeps other files in. It never looks
// inside a tree: a user's file of the same shape is not ours.
func (s *Store) AtomicTemps() []TempFile {
	dirs := []string{s.RepoDir()}
	for _, parent := range []string{s.IntegrationWorktreesDir(), s.InvocationsDir(), s.SandboxesDir()} {
		names, _ := ReadIDDirs(parent)
		for _, id := range names {
			dirs = append(dirs, filepath.Join(parent, id))
		}
	}

	sbs, _ := ReadIDDirs(s.SandboxesDir())
	for _, id := range sbs {
		dirs = append(dirs, s.SandboxLogsDir(id))
	}

	ignore := "." + dataDirIgnore + AtomicTempMarker
	return append(FilesIn(dirs, IsAtomicTemp), FilesIn([]string{s.DataDir}, func(name string) bool {
		return strings.HasPrefix(name, ignore)
	})...)
}

// FilesIn lists the regular files directly in dirs whose name matches
// (unreadable directories are skipped).
func FilesIn(dirs []string, match func(name string) bool) []TempFile {
	var out []TempFile
	for _, d := range dirs {
		ents, err := os.ReadDir(d)
		if err != nil {
			continue
		}

		for _, e := range ents {
			if !e.Type().IsRegular() || !match(e.Name()) {
				continue
			}
			if fi, err := e.Info(); err == nil {
				out = append(out, TempFile{Path: filepath.Join(d, e.Name()), Size: fi.Size(), ModTime: fi.ModTime()})
			}
		}
	}

	return out
}

// MissingMeta tells whether an invocation directory exists without its
// meta.json: an `agent start` killed between creating the directory and
// writing the record (both happen under the repo lock).
func (s *Store) MissingMeta(inv string) bool {
	return missingMeta(s.InvocationDir(inv), s.InvocationMetaPath(inv))
}

// MissingWorktreeMeta tells the same of an integration worktree record
// directory: a `worktree create` killed before it wrote meta.json (also
// under the repo lock).
func (s *Store) MissingWorktreeMeta(id string) bool {
	return missingMeta(s.IntegrationWorktreeDir(id), s.IntegrationWorktreeMetaPath(id))
}

func missingMeta(dir, meta string) bool {
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return false
	}
	_, err := os.Lstat(meta)
	return os.IsNotExist(err)
}
