package store

import "path/filepath"

// CreatorFile is the marker a create writes into a new record directory
// before it makes anything else (the branch, the tree, meta.json): which
// process is making it. A directory without meta.json whose creator is
// gone is what a killed create left; one whose creator still runs is a
// create in progress, never touched.
const CreatorFile = "creator.json"

// Creator is the process making a record directory: its pid and start
// time (nil when unknown), so a reused pid is not taken for it.
type Creator struct {
	PID       int     `json:"pid"`
	StartTime *uint64 `json:"start_time"`
	// Adopt is set by `worktree adopt`, whose marker goes into a tree of
	// the user's, outside the record directory: what a killed adopt's
	// leftover must take back there.
	Adopt *AdoptMarks `json:"adopt,omitempty"`
}

// AdoptMarks are what an adopt writes into the user's tree: the marker,
// and .agency/ and its .gitignore when they were not there before.
type AdoptMarks struct {
	Tree       string `json:"tree"`
	MadeDir    bool   `json:"made_dir"`
	MadeIgnore bool   `json:"made_ignore"`
}

// WriteCreator writes the creator marker into dir.
func WriteCreator(dir string, c Creator) error {
	return writeJSONAtomic(filepath.Join(dir, CreatorFile), c)
}

// ReadCreator reads dir's creator marker; ok is false when there is none
// (a directory made before markers, or a create killed before it wrote
// one) or it does not decode.
func ReadCreator(dir string) (c Creator, ok bool) {
	if err := ReadJSON(filepath.Join(dir, CreatorFile), &c); err != nil {
		return Creator{}, false
	}
	return c, c.PID > 0
}
