package cli

import (
	"fmt"

	"github.com/git-agency/git-agency/agency"
	"github.com/git-agency/git-agency/store"
)

// UndoCmd is `git agency undo`.
type UndoCmd struct {
	JSONFlag
	List bool `help:"Show the operation log, newest first, instead of undoing." xor:"mode"`
	Skip bool `help:"Mark the operation undo would reverse next as skipped, changing nothing else (one that can never be undone), so the next undo reaches older ones." xor:"mode"`
}

type oplogJSON struct {
	// Operations are newest first.
	Operations []store.OplogEntry `json:"operations"`
	// Next is the seq `undo` would reverse (0: nothing).
	Next int `json:"next"`
	// Interrupted is the seq of an undo that was interrupted (the next
	// `undo` finishes it), or 0.
	Interrupted int `json:"interrupted"`
}

func (c *UndoCmd) Run(env *Env) error {
	a, err := env.App()
	if err != nil {
		return err
	}
	if c.List {
		return c.list(env, a)
	}

	undo := a.Undo
	if c.Skip {
		undo = a.SkipUndo
	}

	res, err := undo(env.Ctx)
	if err != nil {
		return err
	}
	if c.JSON {
		return printJSON(env.Stdout, res)
	}

	verb := "undid"
	if c.Skip {
		verb = "skipped"
	} else if res.Resumed {
		verb = "finished the interrupted undo of"
	}

	fmt.Fprintf(env.Stdout, "%s #%d: %s\n", verb, res.Undone.Seq, agency.Describe(res.Undone.Operation))

	for _, l := range undoneLines(res.Undone.Operation, c.Skip, res.Host) {
		fmt.Fprintln(env.Stdout, l)
	}
	for _, n := range res.Notes {
		fmt.Fprintf(env.Stdout, "note: %s\n", n)
	}
	if res.Next != nil {
		fmt.Fprintf(env.Stdout, "next 'git agency undo' would undo #%d: %s\n", res.Next.Seq, agency.Describe(res.Next.Operation))
	}

	return nil
}

// undoneLines say what an undo of op brought back.
func undoneLines(op store.Operation, skipped bool, host string) []string {
	if skipped {
		return nil
	}

	saved := func(what string) string {
		if host != "" {
			return fmt.Sprintf("%s ran on host %s: no sandbox tree made here, its fetched branch %s lands", op.InvocationID, host, store.SandboxBranch(op.InvocationID))
		}
		if op.Restore != nil && op.Restore.Commit != "" {
			return what + " recreated with its uncommitted work"
		}
		return what + " recreated"
	}
	switch op.Op {
	case store.OpLand:
		return []string{
			fmt.Sprintf("integration branch %s is at %s again", op.Branch, agency.ShortSHA(op.Before)),
			saved("sandbox of "+op.InvocationID) + "; it is ready to land again",
		}
	case store.OpDiscard:
		return []string{saved("sandbox of " + op.InvocationID)}
	case store.OpCheckpointApply:
		if op.Restore != nil && op.Restore.Checkpoint > 0 {
			return []string{fmt.Sprintf("sandbox of %s is back at checkpoint %d (its state before the apply)", op.InvocationID, op.Restore.Checkpoint)}
		}
		return []string{fmt.Sprintf("sandbox of %s is back at its HEAD, clean (its state before the apply)", op.InvocationID)}
	case store.OpWorktreeRemove:
		lines := []string{saved(fmt.Sprintf("worktree %q", op.WorktreeName)) + " at " + op.TreePath}
		if len(op.Stopped) > 0 {
			lines = append(lines, fmt.Sprintf("the agents it stopped stay stopped: %v", op.Stopped))
		}
		return lines
	}

	return nil
}

func (c *UndoCmd) list(env *Env, a *agency.App) error {
	log, err := a.Oplog()
	if err != nil {
		return err
	}

	out := oplogJSON{Operations: []store.OplogEntry{}}
	for i := len(log.Entries) - 1; i >= 0; i-- {
		out.Operations = append(out.Operations, log.Entries[i])
	}
	if n := log.Next(); n != nil {
		out.Next = n.Seq
	}

	if log.Interrupted != nil {
		out.Interrupted = log.Interrupted.Seq
		out.Next = log.Interrupted.Undoes
	}

	if c.JSON {
		return printJSON(env.Stdout, out)
	}

	if len(out.Operations) == 0 {
		fmt.Fprintln(env.Stderr, "the operation log is empty")
		return nil
	}

	t := newTable(env, "SEQ", "TIME", "OPERATION", "STATE")
	for _, e := range out.Operations {
		state := "-"
		switch {
		case e.Op == store.OpUndo && e.State == store.UndoStarted:
			state = interruptedState(log, e)
		case e.Op == store.OpUndo:
			state = e.State
		case e.UndoState == store.UndoSkipped:
			state = fmt.Sprintf("skipped by #%d", e.UndoneBy)
		case e.UndoneBy != 0:
			state = fmt.Sprintf("undone by #%d", e.UndoneBy)
		case e.Seq == out.Next:
			state = "next to undo"
		}

		t.add(fmt.Sprint(e.Seq), env.when(e.Time), agency.Describe(e.Operation), state)
	}

	t.flush()
	return nil
}

// interruptedState is the STATE of an undo that started and never
// finished: the next undo finishes it only while its operation is not
// undone or skipped by another (log.Interrupted).
func interruptedState(log *store.Oplog, e store.OplogEntry) string {
	if log.Interrupted != nil && log.Interrupted.Seq == e.Seq {
		return "interrupted (undo finishes it)"
	}
	if t := log.Entry(e.Undoes); t != nil && t.UndoneBy != 0 {
		if t.UndoState == store.UndoSkipped {
			return fmt.Sprintf("interrupted, then skipped by #%d", t.UndoneBy)
		}
		return fmt.Sprintf("interrupted, then undone by #%d", t.UndoneBy)
	}
	return "interrupted"
}
