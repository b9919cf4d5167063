package store

import "path/filepath"

// RepoScan is one repos/<id>/ directory of a data directory.
type RepoScan struct {
	ID     string
	Dir    string
	Record *RepoRecord // nil when repo.json is unreadable
	Err    error
}

// ScanRepos lists every repository that has records in dataDir, by id. It
// reads files only and takes no lock.
func ScanRepos(dataDir string) ([]RepoScan, error) {
	dir := filepath.Join(dataDir, "repos")
	names, err := ReadDirNames(dir)
	if err != nil {
		return nil, err
	}

	var out []RepoScan
	for _, id := range names {
		e := RepoScan{ID: id, Dir: filepath.Join(dir, id)}
		var rec RepoRecord
		if err := ReadJSON(filepath.Join(e.Dir, "repo.json"), &rec); err != nil {
			e.Err = err
		} else {
			e.Record = &rec
		}

		out = append(out, e)
	}

	return out, nil
}
