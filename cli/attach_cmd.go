package cli

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"

	"github.com/git-agency/git-agency/agency"
	"github.com/git-agency/git-agency/errs"
	"github.com/git-agency/git-agency/store"
)

// AgentAttachCmd is `agent attach`.
type AgentAttachCmd struct {
	InvocationArg
}

func (c *AgentAttachCmd) Run(env *Env) error {
	a, err := env.App()
	if err != nil {
		return err
	}

	if rec := onHostRecord(a, c.Invocation); rec != nil {
		return attachOnHost(env, a, rec)
	}
	rec, cmd, err := a.AttachCmd(env.Ctx, c.Invocation)
	if err != nil {
		return err
	}
	if !env.StdinTTY || !env.StdoutTTY {
		return errs.New(errs.EUsage, "run it from a terminal, or use 'tmux attach -t "+store.Deref(rec.TmuxSession)+"'", "attach needs a terminal")
	}

	// tmux's client exits 0 both when the user detaches and when the
	// session ends; the record tells them apart. An agent that ended gives
	// its outcome, as an attached start does (so `attach X && next` goes
	// on only after a run that finished well); a client that could not
	// attach because the run ended meanwhile says so.
	end, aerr := attachFollow(env, a, rec, cmd)
	switch {
	case end == nil:
		return aerr
	case aerr != nil:
		return errs.AttachEnded(end.InvocationID, end.Status)
	}

	return agentExit(end)
}

// attachHeaded follows a headed start: attach when there is a terminal,
// else behave as --detached and say how to attach.
func attachHeaded(env *Env, a *agency.App, rec *store.InvocationRecord) error {
	if !env.StdinTTY || !env.StdoutTTY {
		fmt.Fprintf(env.Stderr, "no terminal: started detached; attach with 'git agency agent attach %s' (or 'tmux attach -t %s')\n",
			rec.InvocationID, store.Deref(rec.TmuxSession))
		return nil
	}

	// The supervisor creates the session; wait until it is running.
	cur := a.WaitRunning(env.Ctx, rec.InvocationID)
	if cur != nil && !cur.Active() {
		return agentExit(cur)
	}

	cur, cmd, err := a.AttachCmd(env.Ctx, rec.InvocationID)
	if err != nil {
		return err
	}

	// The client returns when the agent ended (its outcome is the exit
	// status; so when it ended before the client could attach) or the user
	// detached (0: the agent runs on).
	if end, aerr := attachFollow(env, a, cur, cmd); end != nil {
		return agentExit(end)
	} else {
		return aerr
	}
}

// attachFollow runs the attach command, returns when the user's terminal
// has left the agent's session, and gives the agent's final record if it
// ended (nil: it runs on) with the attach error. Inside tmux the command
// switches the user's client and returns at once: then the wait is for
// that client to leave the session (the user switched away or detached,
// or the agent ended), so that a start or attach from inside tmux gives
// the agent's outcome as one from a plain terminal does; when the agent
// ended, the client is put back on the session it came from.
func attachFollow(env *Env, a *agency.App, rec *store.InvocationRecord, cmd interface{ Run() error }) (*store.InvocationRecord, error) {
	sw := a.SwitchedClient(env.Ctx, rec)
	aerr := runAttach(env, cmd)
	if aerr == nil && sw.Client != "" {
		a.WaitSwitchedAway(env.Ctx, rec, sw.Client)
	}
	end := a.AfterAttach(env.Ctx, rec.InvocationID)
	if end != nil && aerr == nil && sw.Client != "" {
		a.ReturnClient(env.Ctx, sw)
	}
	return end, aerr
}

func runAttach(env *Env, cmd interface{ Run() error }) error {
	if err := cmd.Run(); err != nil {
		return errs.Wrap(errs.EIO, err, "", "tmux attach failed")
	}
	return nil
}

// terminalSize is the size of this process's terminal, if it has one.
func terminalSize() (int, int) {
	for _, f := range []*os.File{os.Stdout, os.Stdin, os.Stderr} {
		if ws, err := unix.IoctlGetWinsize(int(f.Fd()), unix.TIOCGWINSZ); err == nil && ws.Col > 0 && ws.Row > 0 {
			return int(ws.Col), int(ws.Row)
		}
	}
	return 0, 0
}
