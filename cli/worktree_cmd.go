package cli

import (
	"errors"
	"fmt"
	"strings"

	"github.com/git-agency/git-agency/agency"
	"github.com/git-agency/git-agency/errs"
	"github.com/git-agency/git-agency/internal/subproc"
	"github.com/git-agency/git-agency/store"
)

// WorktreeCmd groups `git agency worktree …`.
type WorktreeCmd struct {
	Create WorktreeCreateCmd `cmd:"" help:"Create an integration worktree on a new branch agency/<name>-<short>."`
	Ls     WorktreeLsCmd     `cmd:"" aliases:"list" help:"List integration worktrees."`
	Show   WorktreeShowCmd   `cmd:"" help:"Show one integration worktree."`
	Path   WorktreePathCmd   `cmd:"" help:"Print the absolute path of an integration tree (for cd \"$(git agency worktree path NAME)\")."`
	Open   WorktreeOpenCmd   `cmd:"" help:"Open an integration tree in your editor."`
	Shell  WorktreeShellCmd  `cmd:"" help:"Start $SHELL -l in an integration tree; exit the shell to come back."`
	Rm     WorktreeRmCmd     `cmd:"" aliases:"remove" help:"Remove an integration tree and archive its record (its branch is kept)."`
	Adopt  WorktreeAdoptCmd  `cmd:"" help:"Make an existing linked worktree of this repository an integration worktree (nothing is moved; its branch is kept)."`
}

// WorktreeCreateCmd is `worktree create`.
type WorktreeCreateCmd struct {
	JSONFlag
	Name   string `required:"" help:"Name: 2-40 of a-z, 0-9 and '-', not starting or ending with '-'; unique among present worktrees."`
	Parent string `help:"Branch to start from (default: the current branch)."`
	Open   bool   `help:"Open the new tree in your editor afterwards (an editor that fails only warns: the worktree stays)."`
	Editor string `help:"Editor for --open (default: agency.editor, $VISUAL, $EDITOR)."`
	Full   bool   `help:"Check out every file, even when the current tree uses sparse-checkout."`
}

func (c *WorktreeCreateCmd) Run(env *Env) error {
	a, err := env.App()
	if err != nil {
		return err
	}
	_, err = c.create(env, a)
	return err
}

// create creates the worktree, prints it and, with --open, opens it. An
// editor that fails does not undo the worktree (it is made and usable):
// the command warns and succeeds.
func (c *WorktreeCreateCmd) create(env *Env, a *agency.App) (*store.WorktreeRecord, error) {
	var editor string
	var err error
	if c.Open {
		// Resolve the editor first so a missing one changes nothing.
		if editor, err = a.Editor(c.Editor); err != nil {
			return nil, err
		}
	}

	rec, err := a.CreateWorktree(env.Ctx, agency.CreateWorktreeOptions{Name: c.Name, Parent: c.Parent, Full: c.Full})
	if err != nil {
		return nil, err
	}

	if c.JSON {
		if err := printJSON(env.Stdout, rec); err != nil {
			return rec, err
		}
	} else {
		fmt.Fprintf(env.Stdout, "created worktree %q (%s) on branch %s from %s\n", rec.Name, rec.WorktreeID, rec.Branch, rec.ParentBranch)
		fmt.Fprintf(env.Stdout, "path: %s\n", rec.TreePath)

		if i := rec.Include; i != nil {
			files := fmt.Sprintf("%d ignored files", i.Files)
			if i.Files == 1 {
				files = "1 ignored file"
			}
			fmt.Fprintf(env.Stdout, "included: %s (%s) listed by %s\n", files, humanBytes(i.Bytes), includeSources(i.Sources))
		}

		if rec.Sparse {
			fmt.Fprintln(env.Stdout, "sparse: the same sparse-checkout patterns as the current tree (--full for every file)")
		}

		warnNotIgnored(env, rec.Include)
	}

	if c.Open {
		if err := runEditor(env, editor, rec.TreePath); err != nil {
			e := errs.As(err)
			fmt.Fprintf(env.Stderr, "warning: %s: %s\n", e.Code, e.Msg)
			fmt.Fprintf(env.Stderr, "hint: %s\n", errs.OpenFailedHint(rec.Name))
		}
	}

	return rec, nil
}

// warnNotIgnored names the .worktreeinclude paths a new tree did not get
// because it would not ignore them, and the copied environments that point
// outside it.
func warnNotIgnored(env *Env, inc *store.IncludeStats) {
	if inc != nil && len(inc.Skipped) > 0 {
		fmt.Fprintf(env.Stderr, "warning: %s: %s\n", agency.NotIgnoredNote, strings.Join(inc.Skipped, " "))
	}
	if inc != nil {
		for _, o := range inc.Outside {
			fmt.Fprintf(env.Stderr, "warning: %s\n", o)
		}
	}
}

func runEditor(env *Env, editor, path string) error {
	cmd := agency.EditorCmd(editor, path)
	cmd.SetStdio(env.Stdin, env.Stderr, env.Stderr)
	if err := cmd.Run(); err != nil {
		return errs.EditorFailed(editor, err)
	}
	return nil
}

// WorktreeLsCmd is `worktree ls`.
type WorktreeLsCmd struct {
	JSONFlag
	All bool `help:"Include archived and broken records."`
	AllReposFlag
}

type worktreeJSON struct {
	repoJSON
	*store.WorktreeRecord
	Broken    bool   `json:"broken,omitempty"`
	RecordDir string `json:"record_dir,omitempty"`
}

type brokenWorktreeJSON struct {
	repoJSON
	WorktreeID string `json:"worktree_id"`
	Broken     bool   `json:"broken"`
	Status     string `json:"status"`
	RecordDir  string `json:"record_dir"`
	Error      string `json:"error"`
}

func (c *WorktreeLsCmd) Run(env *Env) error {
	groups, err := repoGroups(env, c.AllRepos)
	if err != nil {
		return err
	}

	out := []any{}
	for i, g := range groups {
		list, err := g.Worktrees(c.All)
		if err != nil {
			return err
		}

		if c.JSON {
			for _, e := range list {
				if e.Broken {
					out = append(out, brokenWorktreeJSON{repoJSON: g.json, WorktreeID: e.ID, Broken: true, Status: "broken", RecordDir: e.Dir, Error: errText(e.Err)})
				} else {
					out = append(out, worktreeJSON{repoJSON: g.json, WorktreeRecord: e.Record})
				}
			}

			continue
		}

		g.header(env, i)
		t := newTable(env, "NAME", "ID", "BRANCH", "STATE", "CREATED", "PATH")
		t.lead = g.lead()
		for _, e := range list {
			if e.Broken {
				t.add("-", e.ID, "-", "broken", "-", e.Dir)
				continue
			}

			r := e.Record
			path := r.TreePath
			if r.State != store.StatePresent {
				path = "-"
			}

			t.add(r.Name, r.WorktreeID, r.Branch, r.State, env.when(r.CreatedAt), path)
		}

		t.flush()
	}

	if c.JSON {
		return printJSON(env.Stdout, out)
	}

	return nil
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// WorktreeShowCmd is `worktree show`.
type WorktreeShowCmd struct {
	JSONFlag
	Worktree string `arg:"" name:"worktree" help:"Name, id or unique id prefix."`
	All      bool   `help:"Let an id prefix match archived worktrees too."`
}

func (c *WorktreeShowCmd) Run(env *Env) error {
	a, err := env.App()
	if err != nil {
		return err
	}

	e, err := a.ResolveWorktree(c.Worktree, c.All)
	if err != nil {
		return err
	}

	r := e.Record
	if c.JSON {
		return printJSON(env.Stdout, r)
	}

	w := env.Stdout
	fmt.Fprintf(w, "name:          %s\n", r.Name)
	fmt.Fprintf(w, "worktree_id:   %s\n", r.WorktreeID)
	fmt.Fprintf(w, "state:         %s\n", r.State)
	fmt.Fprintf(w, "branch:        %s\n", r.Branch)
	fmt.Fprintf(w, "parent_branch: %s\n", orDash(r.ParentBranch))
	fmt.Fprintf(w, "tree_path:     %s\n", r.TreePath)
	if r.Adopted {
		fmt.Fprintf(w, "adopted:       true\n")
	}

	fmt.Fprintf(w, "created_at:    %s\n", r.CreatedAt)
	fmt.Fprintf(w, "last_used_at:  %s\n", orDash(r.LastUsedAt))

	if r.ArchivedAt != "" {
		fmt.Fprintf(w, "archived_at:   %s\n", r.ArchivedAt)
	}

	fmt.Fprintf(w, "record_dir:    %s\n", e.Dir)
	return nil
}

// WorktreePathCmd is `worktree path`.
type WorktreePathCmd struct {
	Worktree string `arg:"" name:"worktree" help:"Name, id or unique id prefix."`
}

func (c *WorktreePathCmd) Run(env *Env) error {
	a, err := env.App()
	if err != nil {
		return err
	}
	r, err := a.ResolvePresentWorktree(c.Worktree)
	if err != nil {
		return err
	}
	fmt.Fprintln(env.Stdout, r.TreePath)
	return nil
}

// WorktreeOpenCmd is `worktree open`.
type WorktreeOpenCmd struct {
	Worktree string `arg:"" name:"worktree" help:"Name, id or unique id prefix."`
	Editor   string `help:"Editor command (default: agency.editor, $VISUAL, $EDITOR)."`
}

func (c *WorktreeOpenCmd) Run(env *Env) error {
	a, err := env.App()
	if err != nil {
		return err
	}

	r, err := a.ResolvePresentWorktree(c.Worktree)
	if err != nil {
		return err
	}

	editor, err := a.Editor(c.Editor)
	if err != nil {
		return err
	}

	return runEditor(env, editor, r.TreePath)
}

// WorktreeShellCmd is `worktree shell`.
type WorktreeShellCmd struct {
	Worktree string `arg:"" name:"worktree" help:"Name, id or unique id prefix."`
}

func (c *WorktreeShellCmd) Run(env *Env) error {
	a, err := env.App()
	if err != nil {
		return err
	}

	r, err := a.ResolvePresentWorktree(c.Worktree)
	if err != nil {
		return err
	}

	cmd := agency.ShellCmd(a.Getenv, r.TreePath)
	cmd.SetStdio(env.Stdin, env.Stdout, env.Stderr)
	if err := cmd.Run(); err != nil {
		var ee *subproc.ExitError
		if errors.As(err, &ee) && ee.Code > 0 {
			// The shell's own exit status is the user's business.
			return &ExitError{Code: ee.Code}
		}
		return errs.Wrap(errs.EIO, err, "check $SHELL", "shell failed")
	}

	return nil
}

// WorktreeRmCmd is `worktree rm`.
type WorktreeRmCmd struct {
	JSONFlag
	Worktree string `arg:"" name:"worktree" help:"Name, id or unique id prefix."`
	Force    bool   `help:"Discard the tree's uncommitted changes (and stop its agents). They are saved first: 'git agency undo' brings the tree back."`
}

// worktreeRmJSON is what `worktree rm --json` prints: the archived record,
// the agents whose sandboxes went with it, and the sandboxes kept.
type worktreeRmJSON struct {
	Worktree  *store.WorktreeRecord `json:"worktree"`
	Discarded []string              `json:"discarded"`
	Kept      []string              `json:"kept"`
	KeptRef   string                `json:"kept_ref,omitempty"`
	// KeptSubmodules: refs holding submodule commits only the tree had.
	KeptSubmodules []string `json:"kept_submodule_refs,omitempty"`
}

func (c *WorktreeRmCmd) Run(env *Env) error {
	a, err := env.App()
	if err != nil {
		return err
	}

	res, err := a.RemoveWorktree(env.Ctx, agency.RemoveWorktreeOptions{Query: c.Worktree, Force: c.Force})
	if err != nil {
		return err
	}
	if c.JSON {
		return printJSON(env.Stdout, worktreeRmJSON{Worktree: res.Worktree, Discarded: nonNil(res.Discarded), Kept: nonNil(res.Kept), KeptRef: res.KeptRef, KeptSubmodules: res.KeptSubmodules})
	}

	r := res.Worktree
	fmt.Fprintf(env.Stdout, "removed worktree %q (%s); record archived, branch %s kept\n", r.Name, r.WorktreeID, r.Branch)

	if res.KeptRef != "" {
		fmt.Fprintln(env.Stdout, agency.KeptHeadLine(res.KeptRef, "'git update-ref -d "+res.KeptRef+"' deletes it"))
	}
	for _, ref := range res.KeptSubmodules {
		fmt.Fprintln(env.Stdout, agency.KeptSubmoduleLine(ref, r.WorktreeID, "tree", "'git update-ref -d "+ref+"' deletes it"))
	}
	for _, id := range res.Discarded {
		fmt.Fprintf(env.Stdout, "stopped and discarded agent %s\n", id)
	}
	for _, id := range res.Kept {
		fmt.Fprintf(env.Stdout, "kept the sandbox of %s (%s, not landed): inspect it or 'git agency agent discard %s'\n", id, keptState(a, id), id)
	}

	return nil
}

// keptState is how a kept sandbox's run ended, as `worktree rm` says it:
// "finished", "failed" or "failed: its setup failed".
func keptState(a *agency.App, id string) string {
	rec, err := a.Store.ReadInvocation(id)
	if err != nil || rec.Status != store.StatusFailed {
		return "finished"
	}
	if store.Deref(rec.ExitReason) == store.ExitSetupFailed {
		return "failed: its setup failed"
	}
	return "failed"
}

// includeSources names where include patterns came from: ".worktreeinclude
// and git config agency.include".
func includeSources(sources []string) string {
	if len(sources) == 0 {
		return agency.IncludeFile
	}
	return strings.Join(sources, " and ")
}
