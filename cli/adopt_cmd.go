package cli

import (
	"fmt"

	"github.com/git-agency/git-agency/agency"
)

// WorktreeAdoptCmd is `worktree adopt`.
type WorktreeAdoptCmd struct {
	JSONFlag
	Path string `arg:"" name:"path" type:"path" help:"The top directory of an existing linked worktree of this repository."`
	Name string `help:"Name (default: the branch name, sanitised: 'feature/Auth' becomes 'feature-auth')."`
}

func (c *WorktreeAdoptCmd) Run(env *Env) error {
	a, err := env.App()
	if err != nil {
		return err
	}

	rec, err := a.AdoptWorktree(env.Ctx, agency.AdoptWorktreeOptions{Path: c.Path, Name: c.Name})
	if err != nil {
		return err
	}
	if c.JSON {
		return printJSON(env.Stdout, rec)
	}

	fmt.Fprintf(env.Stdout, "adopted %s as worktree %q (%s) on branch %s\n", rec.TreePath, rec.Name, rec.WorktreeID, rec.Branch)
	return nil
}
