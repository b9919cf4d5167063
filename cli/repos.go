package cli

import (
	"fmt"
	"os"

	"github.com/git-agency/git-agency/agency"
	"github.com/git-agency/git-agency/errs"
)

// RepoFlag is the global --repo: every command runs for the repository at
// PATH from anywhere, as `git -C PATH` does.
type RepoFlag struct {
	Repo string `name:"repo" type:"path" placeholder:"PATH" help:"Run as if started in PATH (like git -C PATH)."`
}

// AfterApply moves the command's directory to PATH, which must be one.
func (r *RepoFlag) AfterApply(env *Env) error {
	if r.Repo != "" {
		if fi, err := os.Stat(r.Repo); err != nil || !fi.IsDir() {
			return errs.RepoDirMissing(r.Repo)
		}
		env.Dir = r.Repo
	}
	return nil
}

// AllReposFlag is --all-repos of worktree ls, agent ls and watch.
type AllReposFlag struct {
	AllRepos bool `name:"all-repos" help:"Every repository with records in the data directory, grouped by repository (its name and path)."`
}

// repoJSON is what --all-repos adds to each JSON item (nothing without it).
type repoJSON struct {
	RepoPath string `json:"repo_path,omitempty"`
	RepoName string `json:"repo_name,omitempty"`
	// RepoGone: the repository is no longer where the records say.
	RepoGone bool `json:"repo_gone,omitempty"`
}

// repoGroup is one repository of a listing: the current one, or each of
// the data directory's with --all-repos.
type repoGroup struct {
	*agency.RepoEntry
	json repoJSON
}

// repoGroups is the current repository, or with all every repository in
// the data directory (which works from outside any repository too).
func repoGroups(env *Env, all bool) ([]repoGroup, error) {
	if !all {
		a, err := env.App()
		if err != nil {
			return nil, err
		}
		return []repoGroup{{RepoEntry: &agency.RepoEntry{App: a, Store: a.Store}}}, nil
	}

	repos, err := agency.AllRepos(env.Ctx, env.Dir, env.Runner)
	if err != nil {
		return nil, err
	}

	var out []repoGroup
	for i := range repos {
		r := &repos[i]
		out = append(out, repoGroup{RepoEntry: r, json: repoJSON{RepoPath: r.Path, RepoName: r.Name, RepoGone: r.Gone}})
	}

	return out, nil
}

// header prints an --all-repos group's heading (nothing for the current
// repository alone): a blank line between groups, then "== name (path)".
// Without a terminal the rows are TSV, and each begins with the
// repository's path instead (lead).
func (g repoGroup) header(env *Env, i int) {
	if g.json.RepoPath == "" || !env.StdoutTTY {
		return
	}
	if i > 0 {
		fmt.Fprintln(env.Stdout)
	}
	fmt.Fprintf(env.Stdout, "== %s (%s)\n", g.Name, g.Path)
	if g.Gone {
		fmt.Fprintf(env.Stdout, "   %s\n", g.Note)
	}
}

// lead is what begins each TSV row of an --all-repos group without a
// terminal: the repository's path (nothing for the current one alone).
func (g repoGroup) lead() []string {
	if g.json.RepoPath == "" {
		return nil
	}
	return []string{g.Path}
}
