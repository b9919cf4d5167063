package store

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// identityPath is the file in a repository's common git directory that
// keeps its repo id. repo_id hashes the directory's path; the file is what
// still names the records after the repository is moved or renamed.
func identityPath(commonDir string) string { return filepath.Join(commonDir, "agency-repo-id") }

var repoIDRE = regexp.MustCompile(`^[0-9a-f]{16}$`)

// readIdentity returns the repo id kept in a common git directory, or "".
func readIdentity(commonDir string) string {
	b, err := os.ReadFile(identityPath(commonDir))
	if err != nil {
		return ""
	}
	id := strings.TrimSpace(string(b))
	if !repoIDRE.MatchString(id) {
		return ""
	}
	return id
}

// findMoved looks for the records of this repository under another repo id:
// it was moved or renamed, so its path hashes to a new id. Either its git
// directory names the old id (and the old path no longer holds that
// repository: otherwise this is a copy, which starts afresh), or, for
// records older than the identity file, a repo.json whose path is gone owns
// a tree that git registers as one of this repository's worktrees. It
// returns the old id and the old path ("" when the records already name
// this path), or "" when the records are not elsewhere.
func (s *Store) findMoved(commonDir string) (id, from string) {
	if marked := readIdentity(commonDir); marked != "" {
		if marked == s.RepoID {
			return "", ""
		}

		var rr RepoRecord
		if ReadJSON(filepath.Join(s.reposDir(), marked, "repo.json"), &rr) != nil || rr.CommonDir == "" {
			return "", ""
		}
		if rr.CommonDir == commonDir {
			return marked, "" // moved before, and relinked
		}
		if readIdentity(rr.CommonDir) == marked {
			return "", "" // the original is still there: a copy
		}

		return marked, rr.CommonDir
	}

	if _, err := os.Stat(s.RepoDir()); err == nil {
		return "", "" // known here already
	}

	trees := registeredTrees(commonDir)
	if len(trees) == 0 {
		return "", ""
	}

	ids, _ := ReadDirNames(s.reposDir())
	for _, cand := range ids {
		var rr RepoRecord
		if ReadJSON(filepath.Join(s.reposDir(), cand, "repo.json"), &rr) != nil || rr.CommonDir == "" {
			continue
		}
		if _, err := os.Stat(rr.CommonDir); !os.IsNotExist(err) {
			continue
		}

		root := filepath.Join(s.reposDir(), cand) + string(filepath.Separator)
		for _, t := range trees {
			if strings.HasPrefix(t, root) {
				return cand, rr.CommonDir
			}
		}
	}

	return "", ""
}

// registeredTrees lists the paths of the linked worktrees git registers in
// a common directory (worktrees/*/gitdir names <tree>/.git).
func registeredTrees(commonDir string) []string {
	ents, err := os.ReadDir(filepath.Join(commonDir, "worktrees"))
	if err != nil {
		return nil
	}

	var out []string
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(commonDir, "worktrees", e.Name(), "gitdir"))
		if err == nil {
			out = append(out, filepath.Dir(strings.TrimSpace(string(b))))
		}
	}

	return out
}

// keepIdentity writes the repo id into the common git directory when it is
// not there yet (best effort: a read-only git directory only loses the
// detection of a later move).
func (s *Store) keepIdentity(commonDir string) {
	if readIdentity(commonDir) == s.RepoID {
		return
	}
	_ = WriteFileAtomic(identityPath(commonDir), []byte(s.RepoID+"\n"), 0o644) // best effort (above)
}

// Relink records that the repository now lives at commonDir (repo.json's
// common_dir and moved_from). The caller holds the repo lock.
func (s *Store) Relink(commonDir string) error {
	var rr RepoRecord
	if err := ReadJSON(s.RepoJSONPath(), &rr); err != nil {
		rr = RepoRecord{SchemaVersion: SchemaVersion, RepoID: s.RepoID}
	}
	if rr.CommonDir == commonDir {
		return nil
	}
	rr.MovedFrom, rr.CommonDir = rr.CommonDir, commonDir
	return writeJSONAtomic(s.RepoJSONPath(), rr)
}
