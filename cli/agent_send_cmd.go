package cli

import (
	"fmt"
	"strings"

	"github.com/git-agency/git-agency/agency"
	"github.com/git-agency/git-agency/errs"
	"github.com/git-agency/git-agency/store"
)

// AgentSendCmd is `agent send` (and `git sandbox send`): a follow-up prompt
// in the invocation's own sandbox and conversation.
type AgentSendCmd struct {
	InvocationArg
	Prompt     RawString `xor:"prompt" placeholder:"STRING" help:"The follow-up prompt (without it and --prompt-file, your editor opens)."`
	PromptFile string    `xor:"prompt" type:"existingfile" help:"Read the follow-up prompt from a file."`
	Detached   bool      `short:"d" help:"Return at once instead of following the agent."`
	Host       string    `placeholder:"NAME" help:"Continue on this host instead ('local': this machine): a new invocation whose sandbox starts from this one's last fetched branch, in a new conversation; landing it carries this one's commits too. For a run whose host went away."`
}

func (c *AgentSendCmd) Run(env *Env) error {
	a, err := env.App()
	if err != nil {
		return err
	}

	// On a host: a continuation on another host (--host), or a send to an
	// invocation running on one.
	if c.Host != "" {
		return c.continueElsewhere(env, a)
	}
	if rec := onHostRecord(a, c.Invocation); rec != nil {
		return c.sendOnHost(env, a, rec)
	}

	// Refuse before asking for a prompt.
	if _, err := a.PrepareSend(env.Ctx, c.Invocation); err != nil {
		return err
	}

	pr, err := readPrompt(env, a, c.Prompt, c.PromptFile, true)
	if err != nil {
		return err
	}
	if strings.TrimSpace(pr.text) == "" {
		return errs.SendPromptEmpty()
	}

	rec, err := a.ResolveInvocation(c.Invocation)
	if err != nil {
		return err
	}

	res, err := a.Send(env.Ctx, agency.SendOptions{
		Invocation: rec.InvocationID, Prompt: pr.text, PromptSource: pr.source, PromptPath: pr.path,
	})
	if err != nil {
		return err
	}

	fmt.Fprintln(env.Stdout, res.Record.InvocationID)

	if c.Detached {
		return nil
	}

	if res.Typed {
		// Typed into a running headed agent: join it when there is a
		// terminal to join it from.
		if env.StdinTTY && env.StdoutTTY {
			_, cmd, err := a.AttachCmd(env.Ctx, rec.InvocationID)
			if err != nil {
				return err
			}
			return runAttach(env, cmd)
		}

		return nil
	}

	if res.Record.Mode == store.ModeHeaded {
		return attachHeaded(env, a, res.Record)
	}

	// Only the new turn's output, as a followed start shows it.
	return follow(env, a, rec.InvocationID, true, true, agency.FollowOptions{Kind: agency.LogReadable, From: res.LogSizes})
}
