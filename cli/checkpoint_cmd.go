package cli

import (
	"fmt"

	"github.com/git-agency/git-agency/agency"
	"github.com/git-agency/git-agency/errs"
	"github.com/git-agency/git-agency/store"
)

// CheckpointCmd groups `git agency checkpoint …`.
type CheckpointCmd struct {
	Ls     CheckpointLsCmd     `cmd:"" aliases:"list" help:"List an invocation's checkpoints (id, time, reason, diffstat against the HEAD of the time)."`
	Apply  CheckpointApplyCmd  `cmd:"" help:"Roll an invocation's sandbox back to a checkpoint (the agent must not be running). The current state is saved as a checkpoint first, so the rollback can be undone."`
	Create CheckpointCreateCmd `cmd:"" help:"Take a checkpoint of an invocation's sandbox now, running or not."`
}

// InvocationFlag names the invocation of a checkpoint command.
type InvocationFlag struct {
	Invocation string `required:"" short:"i" help:"Invocation id or unique id prefix."`
}

// CheckpointLsCmd is `checkpoint ls`.
type CheckpointLsCmd struct {
	InvocationFlag
	JSONFlag
}

type checkpointsJSON struct {
	InvocationID string             `json:"invocation_id"`
	Checkpoints  []store.Checkpoint `json:"checkpoints"`
}

func (c *CheckpointLsCmd) Run(env *Env) error {
	a, err := env.App()
	if err != nil {
		return err
	}

	if ok, err := checkpointOnHost(env, a, c.Invocation, c.JSON, "ls"); ok {
		if !errs.Is(err, errs.EHostUnreachable) {
			return err
		}
		return c.fetched(env, a, err)
	}
	rec, list, err := a.ListCheckpoints(env.Ctx, c.Invocation)
	if err != nil {
		return err
	}
	return c.print(env, rec, list)
}

// fetched lists the checkpoints of an invocation whose host does not
// answer from the refs fetched here, after saying so.
func (c *CheckpointLsCmd) fetched(env *Env, a *agency.App, why error) error {
	rec, err := a.ResolveInvocation(c.Invocation)
	if err != nil {
		return err
	}
	list, err := a.FetchedCheckpoints(env.Ctx, rec)
	if err != nil {
		return err
	}
	fmt.Fprintf(env.Stderr, "warning: %v\nthe checkpoints fetched from %s before:\n", why, rec.Host)
	return c.print(env, rec, list)
}

func (c *CheckpointLsCmd) print(env *Env, rec *store.InvocationRecord, list []store.Checkpoint) error {
	if list == nil {
		list = []store.Checkpoint{}
	}
	if c.JSON {
		return printJSON(env.Stdout, checkpointsJSON{InvocationID: rec.InvocationID, Checkpoints: list})
	}

	if len(list) == 0 {
		fmt.Fprintf(env.Stderr, "invocation %s has no checkpoints yet\n", rec.InvocationID)
		return nil
	}

	t := newTable(env, "ID", "CREATED", "REASON", "DIFFSTAT", "UNTRACKED", "COMMIT")
	for _, cp := range list {
		untracked := "no"
		if cp.IncludesUntracked {
			untracked = "yes"
		}
		t.add(fmt.Sprint(cp.ID), env.when(cp.CreatedAt), orDash(cp.Reason), orDash(cp.Diffstat), untracked, short(cp.SnapshotCommit))
	}

	t.flush()
	return nil
}

func short(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return orDash(sha)
}

// CheckpointApplyCmd is `checkpoint apply`.
type CheckpointApplyCmd struct {
	InvocationFlag
	JSONFlag
	Checkpoint string `arg:"" name:"checkpoint" help:"Checkpoint id (see 'checkpoint ls')."`
}

type applyJSON struct {
	InvocationID string           `json:"invocation_id"`
	Applied      store.Checkpoint `json:"applied"`
	// UndoCheckpoint holds the state before the rollback (0: there was
	// nothing to save).
	UndoCheckpoint int  `json:"undo_checkpoint"`
	UndoTaken      bool `json:"undo_taken"`
	// Head is the sandbox's HEAD, which a rollback leaves where it is;
	// LaterCommits its commits past the checkpoint's HEAD.
	Head         string `json:"head"`
	LaterCommits int    `json:"later_commits"`
}

func (c *CheckpointApplyCmd) Run(env *Env) error {
	a, err := env.App()
	if err != nil {
		return err
	}

	if ok, err := checkpointOnHost(env, a, c.Invocation, c.JSON, "apply", c.Checkpoint); ok {
		return err
	}
	res, err := a.ApplyCheckpoint(env.Ctx, c.Invocation, c.Checkpoint)
	if err != nil {
		return err
	}

	inv := res.Invocation.InvocationID
	if c.JSON {
		return printJSON(env.Stdout, applyJSON{InvocationID: inv, Applied: res.Applied, UndoCheckpoint: res.Undo, UndoTaken: res.UndoTaken,
			Head: res.Head, LaterCommits: res.LaterCommits})
	}

	switch {
	case res.UndoTaken:
		fmt.Fprintf(env.Stdout, "saved the state before the rollback as checkpoint %d\n", res.Undo)
	case res.Undo > 0:
		fmt.Fprintf(env.Stdout, "the state before the rollback is checkpoint %d (unchanged since)\n", res.Undo)
	}

	fmt.Fprintf(env.Stdout, "restored checkpoint %d into %s\n", res.Applied.ID, res.Invocation.SandboxPath)

	if res.LaterCommits > 0 {
		fmt.Fprintln(env.Stdout, errs.RollbackLaterCommits(res.LaterCommits, short(res.Head), short(res.Applied.HeadSHA), res.Invocation.SandboxPath))
	}
	if res.Undo > 0 {
		fmt.Fprintf(env.Stdout, "undo with: git agency checkpoint apply --invocation %s %d\n", inv, res.Undo)
	}

	return nil
}

// checkpointCreateJSON is what `checkpoint create --json` prints: always an
// object. When a checkpoint was made its fields are there too (id,
// snapshot_ref, …); latest is the newest checkpoint's number (0: none).
type checkpointCreateJSON struct {
	InvocationID string `json:"invocation_id"`
	Created      bool   `json:"created"`
	Latest       int    `json:"latest"`
	*store.Checkpoint
}

// CheckpointCreateCmd is `checkpoint create`.
type CheckpointCreateCmd struct {
	InvocationFlag
	JSONFlag
}

func (c *CheckpointCreateCmd) Run(env *Env) error {
	a, err := env.App()
	if err != nil {
		return err
	}

	if ok, err := checkpointOnHost(env, a, c.Invocation, c.JSON, "create"); ok {
		return err
	}
	rec, cp, latest, err := a.CreateCheckpoint(env.Ctx, c.Invocation)
	if err != nil {
		return err
	}

	if c.JSON {
		out := checkpointCreateJSON{InvocationID: rec.InvocationID, Created: cp != nil, Latest: latest, Checkpoint: cp}
		if cp != nil {
			out.Latest = cp.ID
		}
		return printJSON(env.Stdout, out)
	}

	switch {
	case cp != nil:
		fmt.Fprintf(env.Stdout, "checkpoint %d of %s: %s\n", cp.ID, rec.InvocationID, cp.Diffstat)
	case latest > 0:
		fmt.Fprintf(env.Stdout, "no changes since checkpoint %d; nothing to do\n", latest)
	default:
		fmt.Fprintf(env.Stdout, "no uncommitted changes; nothing to checkpoint\n")
	}

	return nil
}

// SandboxCheckpointsCmd is `git sandbox checkpoints <id>`: checkpoint ls
// with the invocation as an argument.
type SandboxCheckpointsCmd struct {
	JSONFlag
	InvocationArg
}

func (c *SandboxCheckpointsCmd) Run(env *Env) error {
	return (&CheckpointLsCmd{InvocationFlag: InvocationFlag{Invocation: c.Invocation}, JSONFlag: c.JSONFlag}).Run(env)
}

// SandboxRollbackCmd is `git sandbox rollback <id> <n>`: checkpoint apply.
type SandboxRollbackCmd struct {
	JSONFlag
	InvocationArg
	Checkpoint string `arg:"" name:"checkpoint" help:"Checkpoint id (see 'git sandbox checkpoints')."`
}

func (c *SandboxRollbackCmd) Run(env *Env) error {
	return (&CheckpointApplyCmd{InvocationFlag: InvocationFlag{Invocation: c.Invocation}, JSONFlag: c.JSONFlag, Checkpoint: c.Checkpoint}).Run(env)
}
