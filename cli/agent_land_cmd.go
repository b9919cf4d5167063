package cli

import (
	"bytes"
	"errors"
	"fmt"
	"github.com/git-agency/git-agency/errs"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/git-agency/git-agency/agency"
	"github.com/git-agency/git-agency/gitcore"
	"github.com/git-agency/git-agency/internal/subproc"
	"github.com/git-agency/git-agency/store"
)

// AgentDiffCmd is `agent diff` (and `git sandbox diff`).
type AgentDiffCmd struct {
	JSONFlag
	InvocationArg
	Stat    bool `help:"Show a diffstat instead of the full patch."`
	NoPager bool `help:"Do not page the output on a terminal."`
}

type diffJSON struct {
	InvocationID     string   `json:"invocation_id"`
	BaseCommit       string   `json:"base_commit"`
	SandboxBranch    string   `json:"sandbox_branch"`
	Commits          []string `json:"commits"`
	Subjects         []string `json:"subjects"`
	Patch            string   `json:"patch"`
	SandboxPresent   bool     `json:"sandbox_present"`
	UncommittedFiles []string `json:"uncommitted_files"`
	UncommittedPatch string   `json:"uncommitted_patch"`
	Denylisted       []string `json:"denylisted,omitempty"`
	// DirtySubmodules: submodules with uncommitted files inside them,
	// which no checkpoint or land holds.
	DirtySubmodules []string `json:"dirty_submodules,omitempty"`
	// Astray: commits the sandbox's HEAD holds that its branch does not.
	Astray *astrayJSON `json:"astray,omitempty"`
}

type astrayJSON struct {
	Where    string   `json:"where"`
	Head     string   `json:"head"`
	Branch   string   `json:"branch,omitempty"`
	Commits  []string `json:"commits"`
	Subjects []string `json:"subjects"`
}

// idsAndSubjects are commits' ids and subjects, as two lists (never nil).
func idsAndSubjects(commits []gitcore.Commit) (ids, subjects []string) {
	ids, subjects = []string{}, []string{}
	for _, cm := range commits {
		ids = append(ids, cm.ID)
		subjects = append(subjects, cm.Subject)
	}
	return ids, subjects
}

func (c *AgentDiffCmd) Run(env *Env) error {
	a, err := env.App()
	if err != nil {
		return err
	}

	color := env.Color()
	d, err := a.Diff(env.Ctx, c.Invocation, gitcore.DiffOptions{Color: color && !c.JSON, Stat: c.Stat})
	if err != nil {
		return err
	}

	r := d.Invocation
	if c.JSON {
		out := diffJSON{InvocationID: r.InvocationID, BaseCommit: r.BaseCommit, SandboxBranch: r.SandboxBranch,
			Commits: []string{}, Subjects: []string{}, Patch: string(d.Patch), SandboxPresent: d.SandboxPresent,
			UncommittedFiles: append([]string{}, d.UncommittedFiles...), UncommittedPatch: string(d.Uncommitted), Denylisted: d.Denied,
			DirtySubmodules: d.DirtySubmodules}
		out.Commits, out.Subjects = idsAndSubjects(d.Commits)
		if as := d.Astray; as != nil {
			out.Astray = &astrayJSON{Where: as.Where, Head: as.Head, Branch: as.Branch}
			out.Astray.Commits, out.Astray.Subjects = idsAndSubjects(as.Commits)
		}

		return printJSON(env.Stdout, out)
	}

	var b bytes.Buffer
	head := func(s string) {
		if color {
			s = "\x1b[1;33m" + s + "\x1b[m"
		}
		fmt.Fprintln(&b, s)
	}
	short := r.BaseCommit
	if len(short) > 12 {
		short = short[:12]
	}

	head(fmt.Sprintf("## commits: %d (%s..%s)", len(d.Commits), short, r.SandboxBranch))
	b.Write(d.Log)

	if len(d.Patch) > 0 {
		b.WriteString("\n")
		b.Write(d.Patch)
	}

	b.WriteString("\n")

	if as := d.Astray; as != nil {
		head(fmt.Sprintf("## commits off the sandbox branch: %d (HEAD %s; land refuses them, discard keeps them under refs/agency/kept/)", len(as.Commits), as.Where))
		for _, cm := range as.Commits {
			fmt.Fprintf(&b, "%s %s\n", agency.ShortSHA(cm.ID), cm.Subject)
		}
		b.WriteString("\n")
	}

	switch {
	case !d.SandboxPresent:
		head("## uncommitted changes: none (the sandbox tree was removed)")
	case len(d.UncommittedFiles) == 0:
		head("## uncommitted changes: none")
	default:
		head(fmt.Sprintf("## uncommitted changes in the sandbox: %d file(s), tracked and untracked (land them with --apply)", len(d.UncommittedFiles)))
		b.Write(d.Uncommitted)
	}

	if len(d.Denied) > 0 {
		head("## left out, denylisted untracked files (never landed): " + strings.Join(d.Denied, " "))
	}
	for _, p := range d.DirtySubmodules {
		head("## left out: " + agency.DirtySubmoduleLine(p))
	}

	return page(env, a, &b, c.NoPager)
}

// page writes text to stdout, through git's pager on a terminal, as git
// does (LESS=FRX, LV=-c unless set).
func page(env *Env, a *agency.App, text *bytes.Buffer, noPager bool) error {
	pager := ""
	if env.StdoutTTY && !noPager {
		pager = a.Repo.Pager(env.Ctx)
	}

	if pager == "" {
		_, err := io.Copy(env.Stdout, text)
		return err
	}

	penv := os.Environ()
	if os.Getenv("LESS") == "" {
		penv = append(penv, "LESS=FRX")
	}
	if os.Getenv("LV") == "" {
		penv = append(penv, "LV=-c")
	}

	cmd := subproc.ShellTerminal(pager, "", penv)
	cmd.SetStdio(text, env.Stdout, env.Stderr)
	if err := cmd.Run(); err != nil {
		// A pager that cannot run: print plainly, as git falls back.
		var ee *subproc.ExitError
		if !errors.As(err, &ee) {
			_, err = io.Copy(env.Stdout, text)
			return err
		}
	}

	return nil
}

// AgentLandCmd is `agent land` (and `git sandbox land`).
type AgentLandCmd struct {
	JSONFlag
	Invocations []string `arg:"" optional:"" name:"invocation" complete:"pending" help:"Invocation ids or unique id prefixes, landed in the order given, each on top of the ones before it."`
	All         bool     `help:"Land every finished invocation waiting to land (of -w's worktree, or of every worktree), oldest finished first."`
	Worktree    string   `short:"w" help:"With --all: only this integration worktree's invocations."`
	Apply       bool     `help:"Also land the sandbox's uncommitted work (untracked files included) as one commit, titled with the prompt's first line and an 'Agency-Invocation: <id>' trailer."`
	RequireBase bool     `help:"Refuse when the integration HEAD is no longer the invocation's base commit."`
	Check       bool     `help:"Only say whether the land would apply cleanly and which files would conflict; touch nothing (exit 1 on conflict, or with land's own error when land would refuse: a dirty integration tree, files in the way)."`
	NoVerify    bool     `help:"Land without running the check (agency.verify); the record says it was skipped."`
	SendBack    bool     `help:"When the check fails, send its command, exit status and the last 100 lines of its log to the agent as a follow-up prompt; its next finish is verified and landed again (as agency.verify.sendBack)."`
	Batch       int      `placeholder:"N" help:"Verify up to N stacked candidates at once: only the top of the stack is checked; when it fails the stack is bisected to land the longest green prefix and find the culprit."`
}

func (c *AgentLandCmd) Run(env *Env) error {
	a, err := env.App()
	if err != nil {
		return err
	}

	ids, err := c.ids(env, a)
	if err != nil {
		return err
	}

	if c.Apply {
		// The uncommitted work of an agent on a host comes as a commit
		// the host makes and this side fetches.
		if err := a.HostApplyAll(env.Ctx, ids); err != nil {
			return err
		}
	}
	opts := agency.LandOptions{Query: ids[0], Apply: c.Apply, RequireBase: c.RequireBase,
		NoVerify: c.NoVerify, SendBack: c.SendBack, Batch: c.Batch}
	if c.Check {
		return c.check(env, a, opts)
	}
	// Runs on hosts: their outcome and refs fetched now.
	a.CatchUpHosts(env.Ctx, ids)
	if len(ids) > 1 || c.All || c.Batch > 1 {
		return c.landMany(env, a, ids, opts)
	}

	res, err := a.Land(env.Ctx, opts)
	if c.JSON {
		// One land or several: the same array of outcomes.
		inv := ids[0]
		if res != nil {
			inv = res.InvocationID
		}
		if perr := printJSON(env.Stdout, []agency.LandOutcome{agency.OutcomeOf(inv, res, err)}); perr != nil {
			return perr
		}

		return err
	}

	if err != nil {
		return err
	}

	printLines(env.Stdout, res.Report())
	return nil
}

// ids are the invocations to land: the arguments, or with --all the
// finished ones waiting.
func (c *AgentLandCmd) ids(env *Env, a *agency.App) ([]string, error) {
	switch {
	case c.All && len(c.Invocations) > 0:
		return nil, errs.LandIDsAndAll()
	case c.Worktree != "" && !c.All:
		return nil, errs.LandWorktreeWithoutAll()
	case c.Check && (c.All || len(c.Invocations) > 1):
		return nil, errs.LandCheckOne()
	case c.Batch < 0:
		return nil, errs.LandBatchNegative()
	case c.All:
		ids, err := a.ReadyToLand(env.Ctx, c.Worktree, c.Apply)
		if err == nil && len(ids) == 0 {
			err = errs.NothingReadyToLand()
		}
		return ids, err
	case len(c.Invocations) == 0:
		return nil, errs.LandNoIDs()
	}

	return c.Invocations, nil
}

func (c *AgentLandCmd) check(env *Env, a *agency.App, opts agency.LandOptions) error {
	res, err := a.CheckLand(env.Ctx, opts)
	if err != nil {
		return err
	}

	if c.JSON {
		if err := printJSON(env.Stdout, res); err != nil {
			return err
		}
	} else {
		printCheck(env.Stdout, res)
	}

	if err := res.Refusal(); err != nil && !c.JSON {
		return err // land would refuse: its own error
	}
	if !res.Clean || res.Refused != "" {
		return &ExitError{Code: 1}
	}

	return nil
}

// landMany lands several invocations in order and lists what happened to
// each; it fails (E_LAND_SOME) unless all landed.
func (c *AgentLandCmd) landMany(env *Env, a *agency.App, ids []string, opts agency.LandOptions) error {
	if opts.Batch > 1 && !a.AnyVerify() {
		return errs.VerifyNotConfigured("--batch")
	}

	outs := a.LandMany(env.Ctx, ids, opts)
	landed := 0
	for _, o := range outs {
		if o.Outcome == agency.OutcomeLanded {
			landed++
		}
	}

	if c.JSON {
		if err := printJSON(env.Stdout, outs); err != nil {
			return err
		}
	} else {
		for _, o := range outs {
			fmt.Fprintf(env.Stdout, "%-14s %s", o.InvocationID, o.Outcome)
			if o.Outcome == agency.OutcomeLanded && o.Result != nil {
				fmt.Fprintf(env.Stdout, " (HEAD %s)", agency.ShortSHA(o.Result.ResultHead))
			} else if o.Error != "" {
				fmt.Fprintf(env.Stdout, ": %s", o.Error)
			}
			fmt.Fprintln(env.Stdout)
		}
	}

	if landed == len(outs) {
		return nil
	}

	return errs.LandSome(landed, len(outs))
}

func printCheck(w io.Writer, res *agency.LandResult) {
	what := agency.Plural(len(res.Commits), "commit")
	if res.Applied {
		what += " and the uncommitted changes"
	}

	if res.Clean && res.Refused != "" {
		fmt.Fprintf(w, "%s would apply cleanly (%s onto %s at %s), but land refuses as things are:\n", res.InvocationID, what, res.Branch, agency.ShortSHA(res.TargetHead))
	} else if res.Clean {
		fmt.Fprintf(w, "%s would land cleanly: %s onto %s at %s\n", res.InvocationID, what, res.Branch, agency.ShortSHA(res.TargetHead))
	} else {
		at := "its uncommitted changes"
		if res.ConflictCommit != "" {
			at = "commit " + agency.ShortSHA(res.ConflictCommit) + " (" + res.ConflictWhat + ")"
		}

		fmt.Fprintf(w, "%s would conflict at %s onto %s at %s, in:\n", res.InvocationID, at, res.Branch, agency.ShortSHA(res.TargetHead))

		for _, f := range res.Conflicts {
			fmt.Fprintf(w, "  %s\n", f)
		}
	}

	if res.Clean && len(res.Skipped) > 0 {
		fmt.Fprintf(w, "note: %s already on the branch would be skipped\n", agency.Plural(len(res.Skipped), "commit"))
	}
	if len(res.ConflictsWith) > 0 {
		fmt.Fprintf(w, "note: it would conflict if landed after %s\n", strings.Join(res.ConflictsWith, ", "))
	}
}

// printLines prints a result's report, a line each.
func printLines(w io.Writer, lines []string) {
	for _, l := range lines {
		fmt.Fprintln(w, l)
	}
}

// AgentDiscardCmd is `agent discard` (and `git sandbox discard`).
type AgentDiscardCmd struct {
	JSONFlag
	Invocations []string `arg:"" name:"invocation" help:"Invocation ids or unique id prefixes (several: each is discarded in turn)."`
}

// Run resolves every id first (a typo discards nothing), then discards
// each; one that fails does not stop the others, and makes the exit
// status 1. --json prints the record, or with several ids an array.
func (c *AgentDiscardCmd) Run(env *Env) error {
	a, err := env.App()
	if err != nil {
		return err
	}

	ids, onHosts, err := resolveDiscards(a, c.Invocations)
	if err != nil {
		return err
	}

	var recs []discardJSON
	for _, rec := range onHosts {
		done, err := discardOnHost(env, a, rec, c.JSON)
		if err != nil {
			return err
		}

		recs = append(recs, discardJSON{InvocationRecord: done})
	}

	var first error
	for _, id := range ids {
		res, err := a.Discard(env.Ctx, id)
		if err != nil {
			if len(ids) == 1 {
				return err
			}

			printError(env, err)

			if first == nil {
				first = &ExitError{Code: 1}
			}

			continue
		}

		recs = append(recs, discardJSON{InvocationRecord: res.Invocation, KeptRef: res.Kept,
			KeptSubmodules: res.KeptSubmodules, DirtySubmodules: res.DirtySubmodules})

		if !c.JSON {
			printLines(env.Stdout, res.Report())
		}
	}

	if c.JSON {
		var err error
		if len(c.Invocations) == 1 && len(recs) == 1 {
			err = printJSON(env.Stdout, recs[0])
		} else {
			err = printJSON(env.Stdout, recs)
		}

		if err != nil {
			return err
		}
	}

	return first
}

// discardJSON is one discard in --json: the record, and what the human
// report says beside it: the refs that now hold commits only the sandbox
// had, and the submodules whose uncommitted files went with the sandbox.
type discardJSON struct {
	*store.InvocationRecord
	KeptRef         string   `json:"kept_ref,omitempty"`
	KeptSubmodules  []string `json:"kept_submodule_refs,omitempty"`
	DirtySubmodules []string `json:"dirty_submodules,omitempty"`
}

// RunCmd is `git agency run`: `worktree create --name N --open`, then
// `agent start --worktree N` with the same start flags.
type RunCmd struct {
	Name   string `required:"" help:"Name of the new integration worktree."`
	Parent string `help:"Branch to start from (default: the current branch)."`
	NoOpen bool   `help:"Do not open the new worktree in your editor."`
	Editor string `help:"Editor (default: agency.editor, $VISUAL, $EDITOR)."`

	// The flags of agent start (without --worktree), passed through.
	StartFlags
}

// Run checks the runner and reads the prompt before anything is made; if
// the agent then fails to start, the new worktree is taken back (unless it
// already holds work), so the same command can simply be run again.
func (c *RunCmd) Run(env *Env) error {
	a, err := env.App()
	if err != nil {
		return err
	}

	start := AgentStartCmd{Worktree: c.Name, StartFlags: c.StartFlags}
	opts := start.options()
	if _, err := a.PrepareRunner(opts); err != nil {
		return err
	}
	if opts, err = start.withPrompt(env, a, opts); err != nil {
		return err
	}

	if !c.NoOpen {
		if _, err := a.Editor(c.Editor); err != nil {
			return errs.NoEditorOr("--no-open")
		}
	}

	create := WorktreeCreateCmd{Name: c.Name, Parent: c.Parent, Open: !c.NoOpen, Editor: c.Editor, Full: c.Full}
	wt, err := create.create(env, a)
	if err != nil {
		return err
	}

	rec, err := a.StartInvocation(env.Ctx, opts)
	if err != nil {
		kept, uerr := a.UndoCreateWorktree(env.Ctx, wt)
		return errs.RunStartFailed(err, wt.Name, kept, uerr)
	}

	return start.started(env, a, rec)
}

// resolveDiscards resolves every id of a discard first (a typo discards
// nothing): the local ones, and those on hosts.
func resolveDiscards(a *agency.App, queries []string) ([]string, []*store.InvocationRecord, error) {
	var ids []string
	var onHosts []*store.InvocationRecord
	for _, q := range queries {
		rec, err := a.ResolveInvocation(q)
		if err != nil {
			return nil, nil, err
		}

		if rec.Host != "" {
			onHosts = append(onHosts, rec)
			continue
		}

		if !slices.Contains(ids, rec.InvocationID) {
			ids = append(ids, rec.InvocationID)
		}
	}

	return ids, onHosts, nil
}
