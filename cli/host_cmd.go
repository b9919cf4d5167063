package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime/debug"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/git-agency/git-agency/agency"
	"github.com/git-agency/git-agency/errs"
	"github.com/git-agency/git-agency/store"
)

// HostCmd groups `git agency host …`.
type HostCmd struct {
	Ls      HostLsCmd      `cmd:"" aliases:"list" help:"List the hosts (agency.host.<name>.ssh): reachable or unreachable since when, their agents, git-agency version and wall; every host asked at once, none waited on for more than 4 s."`
	Check   HostCheckCmd   `cmd:"" help:"Check one host: ssh, its git-agency and version, git ≥ 2.38, bubblewrap, tmux, the runners; each failure with a hint."`
	Install HostInstallCmd `cmd:"" help:"Copy this build of git-agency to a host's ~/.local/bin (same OS and architecture only; written, then renamed; verified with --version)."`
}

// HostLsCmd is `host ls`.
type HostLsCmd struct {
	JSON bool `name:"json" help:"Print one JSON object per host."`
}

func (c *HostLsCmd) Run(env *Env) error {
	a, err := env.App()
	if err != nil {
		return err
	}

	rows, err := a.ListHosts(env.Ctx)
	if err != nil {
		return err
	}

	if c.JSON {
		out := make([]map[string]any, 0, len(rows))
		for _, r := range rows {
			out = append(out, map[string]any{"name": r.Config.Name, "ssh": r.Config.SSH, "reachable": r.Live, "state": r.State})
		}
		return printJSON(env.Stdout, out)
	}

	printHostRows(env.Stdout, a, rows)
	return nil
}

func printHostRows(w io.Writer, a *agency.App, rows []agency.HostRow) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "HOST\tSSH\tSTATE\tRUNNING\tQUEUED\tMAX\tVERSION\tWALL")
	for _, r := range rows {
		state, run, queued, maxA, ver, wall := "reachable", "-", "-", "-", "-", "-"
		if !r.Live {
			state = "unreachable"
			if r.State.Since != "" {
				state += " since " + r.State.Since
			}
		}

		if h := r.State.Hello; h != nil {
			run, queued, ver = fmt.Sprint(h.Running), fmt.Sprint(h.Queued), agency.HostText(h.Version)
			maxA = fmt.Sprint(r.Config.MaxActiveOn(h))
			wall = "works"
			if h.Wall != "" {
				wall = agency.HostText(h.Wall)
			}
		}

		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Config.Name, r.Config.SSH, state, run, queued, maxA, ver, wall)
	}

	tw.Flush()
}

// HostCheckCmd is `host check NAME`.
type HostCheckCmd struct {
	Name string `arg:"" help:"The host (agency.host.<name>)."`
}

func (c *HostCheckCmd) Run(env *Env) error {
	a, err := env.App()
	if err != nil {
		return err
	}

	checks, err := a.CheckHost(env.Ctx, c.Name, version())
	if err != nil {
		return err
	}

	bad := 0
	for _, ch := range checks {
		mark := "ok  "
		if !ch.OK {
			mark, bad = "FAIL", bad+1
		}

		fmt.Fprintf(env.Stdout, "%s %-10s %s\n", mark, ch.Name, ch.Detail)

		if !ch.OK {
			fmt.Fprintf(env.Stdout, "     hint: %s\n", ch.Hint)
		}
	}

	if bad > 0 {
		return errs.New(errs.EHost, "follow the hints above", "host %s: %d check(s) failed", c.Name, bad)
	}

	return nil
}

// HostInstallCmd is `host install NAME`.
type HostInstallCmd struct {
	Name string `arg:"" help:"The host (agency.host.<name>)."`
}

func (c *HostInstallCmd) Run(env *Env) error {
	a, err := env.App()
	if err != nil {
		return err
	}
	path, err := a.InstallOnHost(env.Ctx, c.Name, version())
	if err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "installed git-agency %s on %s as %s\n", version(), c.Name, path)
	return nil
}

// HostServeCmd is the hidden `host-serve …` another machine's git-agency
// runs here over ssh.
type HostServeCmd struct {
	Hello  HostServeHelloCmd  `cmd:"" help:"This machine as a host (JSON)."`
	Start  HostServeStartCmd  `cmd:"" help:"Start an agent a caller asked for (JSON on stdin and out)."`
	Status HostServeStatusCmd `cmd:"" help:"The state of a caller's invocations (JSON)."`
	Wait   HostServeWaitCmd   `cmd:"" help:"Wait for a change of a caller's invocations, then their state (JSON)."`
	Verify HostServeVerifyCmd `cmd:"" help:"Check a caller's land candidate here (JSON on stdin and out)."`
	Apply  HostServeApplyCmd  `cmd:"" help:"The commit of an invocation's uncommitted work, for a land --apply (JSON)."`
}

// HostServeVerifyCmd is `host-serve verify`.
type HostServeVerifyCmd struct{}

func (c *HostServeVerifyCmd) Run(env *Env) error {
	in, err := io.ReadAll(env.Stdin)
	if err != nil {
		return err
	}
	out, err := agency.ServeVerify(env.Ctx, in)
	if err != nil {
		return err
	}
	return json.NewEncoder(env.Stdout).Encode(out)
}

// HostServeApplyCmd is `host-serve apply`.
type HostServeApplyCmd struct {
	RepoID string `name:"repo-id" required:""`
	ID     string `arg:""`
}

func (c *HostServeApplyCmd) Run(env *Env) error {
	out, err := agency.ServeApply(env.Ctx, c.RepoID, c.ID)
	if err != nil {
		return err
	}
	return json.NewEncoder(env.Stdout).Encode(out)
}

// HostServeHelloCmd is `host-serve hello`.
type HostServeHelloCmd struct {
	RepoID string `name:"repo-id" help:"Make the mirror of this repository when missing."`
}

func (c *HostServeHelloCmd) Run(env *Env) error {
	h, err := agency.ServeHello(env.Ctx, version(), c.RepoID)
	if err != nil {
		return err
	}
	return json.NewEncoder(env.Stdout).Encode(h)
}

// HostServeStartCmd is `host-serve start`.
type HostServeStartCmd struct{}

func (c *HostServeStartCmd) Run(env *Env) error {
	in, err := io.ReadAll(env.Stdin)
	if err != nil {
		return err
	}

	rec, err := agency.ServeStart(env.Ctx, version(), in)
	if errors.Is(err, agency.ErrNeedBase) {
		return &ExitError{Code: agency.ExitNeedBase}
	}
	if err != nil {
		return err
	}

	return json.NewEncoder(env.Stdout).Encode(rec)
}

// HostServeStatusCmd is `host-serve status`.
type HostServeStatusCmd struct {
	RepoID    string   `name:"repo-id" required:""`
	StartKeys []string `name:"start-keys" help:"Also the invocations started for these keys (a caller's interrupted starts)."`
	IDs       []string `arg:"" optional:""`
}

func (c *HostServeStatusCmd) Run(env *Env) error {
	out, err := agency.ServeStatus(env.Ctx, c.RepoID, c.IDs, c.StartKeys)
	if err != nil {
		return err
	}
	return json.NewEncoder(env.Stdout).Encode(out)
}

// serveStatusFast runs `host-serve status --repo-id ID [IDS…]`, the line
// every live view of another machine sends, without building the whole
// grammar first (a fifth of the host's answer). Any other line, or this one
// in another shape, is left to the parser (ok false).
func serveStatusFast(env *Env, args []string) (code int, ok bool) {
	if len(args) < 4 || args[0] != "host-serve" || args[1] != "status" || args[2] != "--repo-id" {
		return 0, false
	}
	for _, id := range args[4:] {
		if strings.HasPrefix(id, "-") {
			return 0, false
		}
	}

	if env.oneShotGC {
		debug.SetGCPercent(oneShotGCPercent)
	}
	c := HostServeStatusCmd{RepoID: args[3], IDs: args[4:]}
	if err := c.Run(env); err != nil {
		return printError(env, err), true
	}

	return 0, true
}

// HostServeWaitCmd is `host-serve wait`.
type HostServeWaitCmd struct {
	RepoID string        `name:"repo-id" required:""`
	Sig    string        `name:"sig" help:"The signature last seen (none: answer at once)."`
	Within time.Duration `name:"within" default:"45s"`
	IDs    []string      `arg:"" optional:""`
}

func (c *HostServeWaitCmd) Run(env *Env) error {
	out, err := agency.ServeWait(env.Ctx, c.RepoID, c.Sig, c.Within, c.IDs)
	if err != nil {
		return err
	}
	return json.NewEncoder(env.Stdout).Encode(out)
}

// HostFetchCmd is the hidden `host-fetch NAME`: the background fetcher of
// one host (started by the commands that act on its agents).
type HostFetchCmd struct {
	Name string `arg:""`
}

func (c *HostFetchCmd) Run(env *Env) error {
	a, err := env.App()
	if err != nil {
		return err
	}
	return a.RunHostFetcher(env.Ctx, c.Name)
}

// hostOf is the host a start goes to: --host, else the worktree's or the
// default host; "" for this machine ("local" forces it).
func hostOf(a *agency.App, flag, worktree string) string {
	if flag == "local" {
		return ""
	}
	if flag != "" {
		return flag
	}
	name := worktree
	if wt, err := a.ResolvePresentWorktree(worktree); err == nil {
		name = wt.Name
	}
	return strings.TrimSpace(a.DefaultHost(name))
}

// startOnHost is `agent start --host NAME`: the prompt is read here, the
// agent starts there; -d is implied (follow it with agent logs).
func (c *AgentStartCmd) startOnHost(env *Env, a *agency.App, name string, opts agency.StartOptions) error {
	opts, err := c.withPrompt(env, a, opts)
	if err != nil {
		return err
	}

	rec, err := a.StartOnHost(env.Ctx, name, version(), opts)
	if err != nil {
		return err
	}
	a.EnsureHostFetcher(name)
	if c.JSON {
		return printJSON(env.Stdout, rec)
	}

	fmt.Fprintln(env.Stdout, rec.InvocationID)
	return nil
}

// modeText is agent ls's MODE: the mode, and "@host" for an agent on a
// host.
func modeText(r *store.InvocationRecord) string {
	if r.Host != "" {
		return r.Mode + "@" + r.Host
	}
	return r.Mode
}

// onHost runs `agent <args>` on the host an invocation runs on, its output
// here, its exit status ours.
func onHost(env *Env, a *agency.App, rec *store.InvocationRecord, args ...string) error {
	code, err := a.ActOnHost(env.Ctx, rec, env.Stdout, env.Stderr, args...)
	if err != nil {
		return err
	}
	if code != 0 {
		return &ExitError{Code: code}
	}
	return nil
}

// hostArgs are `agent logs`' flags for the host.
func (c *AgentLogsCmd) hostArgs(id string) []string {
	args := []string{"logs", id}
	if c.Follow {
		args = append(args, "--follow")
	}
	if c.Raw {
		args = append(args, "--raw")
	}
	if c.Stderr {
		args = append(args, "--stderr")
	}
	return args
}

// discardOnHost discards an invocation on its host (its agent stopped and
// its sandbox removed there), then marks it discarded here, and returns the
// record as it is now. The host's report is not shown: its "undo with: git
// agency undo" is the host's undo, and here it would undo another
// operation.
func discardOnHost(env *Env, a *agency.App, rec *store.InvocationRecord, asJSON bool) (*store.InvocationRecord, error) {
	code, err := a.ActOnHost(env.Ctx, rec, io.Discard, env.Stderr, "discard", rec.InvocationID)
	if err != nil {
		return nil, err
	}
	if code != 0 {
		return nil, &ExitError{Code: code}
	}

	done, err := a.DiscardHostRecord(env.Ctx, rec.InvocationID)
	if err != nil {
		return nil, err
	}

	if !asJSON {
		printLines(env.Stdout, errs.HostDiscarded(rec.InvocationID, rec.Host, rec.SandboxBranch))
	}
	return done, nil
}
