package cli

import (
	"fmt"
	"strings"

	"github.com/git-agency/git-agency/agency"
	"github.com/git-agency/git-agency/errs"
)

// SetupCmd groups `git agency setup …`.
type SetupCmd struct {
	Show    SetupShowCmd    `cmd:"" help:"Print the setup new sandboxes run before their agent (the committed content: sandboxes are checked out from the commit), from which file, and whether it is approved."`
	Approve SetupApproveCmd `cmd:"" help:"Approve exactly the project setup 'setup show' prints, the committed content (its sha256 goes into local git config)."`
}

// SetupTreeFlag names the tree whose setup files are read.
type SetupTreeFlag struct {
	Worktree string `short:"w" help:"Read the setup files of this integration worktree (default: the current tree)."`
}

// open opens the repository and resolves the tree to read.
func (f SetupTreeFlag) open(env *Env) (*agency.App, string, error) {
	a, err := env.App()
	if err != nil {
		return nil, "", err
	}
	if f.Worktree == "" {
		return a, a.Repo.Toplevel, nil
	}

	wt, err := a.ResolvePresentWorktree(f.Worktree)
	if err != nil {
		return nil, "", err
	}

	return a, wt.TreePath, nil
}

// SetupShowCmd is `setup show`.
type SetupShowCmd struct {
	JSONFlag
	SetupTreeFlag
}

func (c *SetupShowCmd) Run(env *Env) error {
	a, tree, err := c.open(env)
	if err != nil {
		return err
	}

	plan, err := a.ResolveSetup(env.Ctx, tree)
	if err != nil {
		return err
	}
	if c.JSON {
		return printJSON(env.Stdout, plan)
	}

	if plan == nil {
		fmt.Fprintln(env.Stdout, "no setup: agency.setup is unset and the project declares none")
		return nil
	}

	status := "approved"
	switch {
	case !plan.NeedsApproval:
		status = "yours (git config agency.setup), needs no approval"
	case !plan.Approved:
		status = "NOT approved: it does not run until you run 'git agency setup approve'"
	}

	fmt.Fprintf(env.Stdout, "source: %s\nstatus: %s\n", plan.Source, status)

	if plan.SHA256 != "" {
		fmt.Fprintf(env.Stdout, "sha256: %s\n", plan.SHA256)
	}

	fmt.Fprintf(env.Stdout, "script:\n%s", indent(plan.Script))

	for _, f := range plan.WorkingDiffers {
		fmt.Fprintln(env.Stdout, errs.SetupWorkingDiffers(f))
	}

	return nil
}

func indent(s string) string {
	var b strings.Builder
	for _, l := range strings.SplitAfter(strings.TrimRight(s, "\n"), "\n") {
		b.WriteString("    " + l)
	}
	b.WriteString("\n")
	return b.String()
}

// SetupApproveCmd is `setup approve`.
type SetupApproveCmd struct {
	JSONFlag
	SetupTreeFlag
	SHA256 string `name:"sha256" help:"Approve only if the content still has this sha256 (or its first 12 or more hex digits), as 'setup show' printed it."`
}

func (c *SetupApproveCmd) Run(env *Env) error {
	a, tree, err := c.open(env)
	if err != nil {
		return err
	}

	plan, err := a.ApproveSetup(env.Ctx, tree, c.SHA256)
	if err != nil {
		return err
	}
	if c.JSON {
		return printJSON(env.Stdout, plan)
	}

	switch {
	case plan == nil:
		return errs.NoSetup(agency.CursorSetupFile + " or " + agency.CodexSetupFile)
	case !plan.NeedsApproval:
		fmt.Fprintln(env.Stdout, "agency.setup is your own setting and needs no approval")
	default:
		fmt.Fprintf(env.Stdout, "approved the setup from %s (sha256 %s)\n", plan.Source, plan.SHA256)
		for _, f := range plan.WorkingDiffers {
			fmt.Fprintln(env.Stdout, errs.SetupWorkingDiffers(f))
		}
	}

	return nil
}
