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

// This file holds the commands of an invocation that runs on a host:
// they act there, over the host's connection, with the same id.

// onHostRecord is the record of query when that invocation runs on a host
// (nil otherwise: the command acts here).
func onHostRecord(a *agency.App, query string) *store.InvocationRecord {
	if rec, err := a.ResolveInvocation(query); err == nil && rec.Host != "" {
		return rec
	}
	return nil
}

// forward runs `git-agency <args>` for rec on its host, output here, its
// exit status ours.
func forward(env *Env, a *agency.App, rec *store.InvocationRecord, long bool, args ...string) error {
	code, err := a.OnHost(env.Ctx, rec, agency.HostRun{Stdout: env.Stdout, Stderr: env.Stderr, Long: long}, args...)
	if err != nil {
		return err
	}
	if code != 0 {
		return &ExitError{Code: code}
	}
	return nil
}

// sendOnHost is `agent send` of an invocation on a host: the prompt is
// read here, the host resumes the agent. A headed one is then attached
// through `ssh -t` when there is a terminal.
func (c *AgentSendCmd) sendOnHost(env *Env, a *agency.App, rec *store.InvocationRecord) error {
	text, err := c.prompt(env, a)
	if err != nil {
		return err
	}
	headed := rec.Mode == store.ModeHeaded
	run := agency.HostRun{Stdout: env.Stdout, Stderr: env.Stderr}
	code, err := a.SendOnHost(env.Ctx, rec, text, c.Detached || headed, run)
	if err != nil {
		return err
	}
	if code != 0 {
		return &ExitError{Code: code}
	}
	if !headed || c.Detached || !env.StdinTTY || !env.StdoutTTY {
		return nil
	}
	return attachOnHost(env, a, rec)
}

// prompt is the follow-up prompt: the flag, the file, or the editor.
func (c *AgentSendCmd) prompt(env *Env, a *agency.App) (string, error) {
	pr, err := readPrompt(env, a, c.Prompt, c.PromptFile, true)
	if err != nil {
		return "", err
	}
	if strings.TrimSpace(pr.text) == "" {
		return "", errs.SendPromptEmpty()
	}
	return pr.text, nil
}

// continueElsewhere is `agent send ID --host OTHER`.
func (c *AgentSendCmd) continueElsewhere(env *Env, a *agency.App) error {
	if _, err := a.ResolveInvocation(c.Invocation); err != nil {
		return err
	}
	text, err := c.prompt(env, a)
	if err != nil {
		return err
	}
	rec, err := a.ContinueElsewhere(env.Ctx, agency.ContinueOptions{From: c.Invocation, Host: c.Host, Prompt: text, Version: version()})
	if err != nil {
		return err
	}
	fmt.Fprintln(env.Stdout, rec.InvocationID)
	return nil
}

// attachOnHost attaches this terminal to a headed invocation on a host
// (`ssh -t`, tmux attaches there); the record then catches up.
func attachOnHost(env *Env, a *agency.App, rec *store.InvocationRecord) error {
	if !env.StdinTTY || !env.StdoutTTY {
		return errs.New(errs.EUsage, "run it from a terminal", "attach needs a terminal")
	}
	cmd, err := a.HostAttachCmd(env.Ctx, rec)
	if err != nil {
		return err
	}
	aerr := cmd.Run()
	a.AfterHostAttach(env.Ctx, rec)
	// ssh gives the host's attach's exit status (the agent's outcome
	// when it ended), or 255 when the host could not be reached.
	if ee := (*subproc.ExitError)(nil); errors.As(aerr, &ee) && ee.Code >= 0 {
		return &ExitError{Code: ee.Code}
	}
	if aerr != nil {
		return errs.Wrap(errs.EIO, aerr, "", "ssh -t %s", rec.Host)
	}
	return nil
}

// checkpointOnHost forwards a checkpoint command of an invocation on a
// host (its sandbox and checkpoints are there; the refs come back).
func checkpointOnHost(env *Env, a *agency.App, query string, json bool, args ...string) (bool, error) {
	rec := onHostRecord(a, query)
	if rec == nil {
		return false, nil
	}
	args = append([]string{"checkpoint"}, args...)
	args = append(args, "--invocation", rec.InvocationID)
	if json {
		args = append(args, "--json")
	}
	return true, forward(env, a, rec, false, args...)
}
