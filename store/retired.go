package store

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"

	"github.com/git-agency/git-agency/errs"
)

// Retired trees: retired/<name>/. A tree that is no longer needed (a landed
// sandbox's) is renamed here in one step, so the command that retires it
// does not wait for its files to be deleted; a remover process deletes
// them afterwards (runner.SpawnRemover). The remover holds an flock on the
// retired directory while it works: retired entries with that lock free
// were left by a remover that was killed (doctor reports them, gc removes
// them).

// RetiredDir is where retired trees wait for their removal.
func (s *Store) RetiredDir() string { return filepath.Join(s.RepoDir(), "retired") }

// retiredBeside is what a retired directory is recognised by: only a
// directory named retired beside the repository's lock file (retired
// trees are made under that lock) is emptied by RemoveRetired.
const retiredBeside = ".lock"

// LockRetired takes the flock of the retired directory dir: at once or not
// at all (ok false: a remover holds it), or with wait until it is free.
// The lock lasts as long as the returned file is open in this process or
// in a child it was handed to.
func LockRetired(dir string, wait bool) (f *os.File, ok bool, err error) {
	f, err = os.Open(dir)
	if err != nil {
		return nil, false, errs.IO("open", dir, err)
	}

	how := syscall.LOCK_EX
	if !wait {
		how |= syscall.LOCK_NB
	}

	for {
		err = syscall.Flock(int(f.Fd()), how)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}

	if errors.Is(err, syscall.EWOULDBLOCK) {
		f.Close()
		return nil, false, nil
	}

	if err != nil {
		f.Close()
		return nil, false, errs.IO("lock", dir, err)
	}

	return f, true, nil
}

// RetiredEntries are the paths of the retired trees in dir.
func RetiredEntries(dir string) []string {
	names, _ := ReadDirNames(dir)
	out := make([]string, 0, len(names))
	for _, n := range names {
		out = append(out, filepath.Join(dir, n))
	}
	return out
}

// RemoveRetired deletes every retired tree in dir (the caller holds its
// lock), again until none is left: a tree retired meanwhile goes too. dir
// must be a retired directory of a repository's records inside the data
// directory dataDir (its name, the repository's lock file beside it): a
// directory named retired elsewhere is never emptied.
func RemoveRetired(dataDir, dir string) error {
	dir = filepath.Clean(dir)
	if err := CheckInside(dataDir, dir); err != nil {
		return err
	}
	if filepath.Base(dir) != "retired" {
		return errs.UnsafePath(dir, "a retired directory")
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(dir), retiredBeside)); err != nil {
		return errs.UnsafePath(dir, "a retired directory")
	}

	for {
		entries := RetiredEntries(dir)
		if len(entries) == 0 {
			return nil
		}

		for _, e := range entries {
			if err := RemoveAllInside(dir, e); err != nil {
				return err
			}
		}
	}
}
