package tidy

import "github.com/git-agency/git-agency/store"

// checkUndo reports an undo that started and did not finish (a crash, or a
// step that failed after the first change): the repository is half-way
// between the operation and its undo until the next `undo` finishes it.
func (a *Tidier) checkUndo(add addFinding) {
	lines, err := a.Store.ReadOplog()
	if err != nil {
		add("undo", LevelProblem, "see the file's last lines", a.Store.RepoDir(), "cannot read the operation log: %v", err)
		return
	}

	log := store.FoldOplog(lines)
	u := log.Interrupted
	if u == nil {
		return
	}

	what := "an operation"
	if e := log.Entry(u.Undoes); e != nil {
		what = a.Host.Describe(e.Operation)
	}

	add("undo", LevelProblem, "run 'git agency undo' to finish it", "",
		"undo #%d of #%d (%s) was interrupted: it is half done", u.Seq, u.Undoes, what)
}
