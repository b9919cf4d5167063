package cli

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	"github.com/git-agency/git-agency/agency"
	"github.com/git-agency/git-agency/errs"
)

// DoctorCmd is `doctor`.
type DoctorCmd struct {
	JSONFlag
}

type doctorJSON struct {
	OK       bool             `json:"ok"`
	Problems int              `json:"problems"`
	Findings []agency.Finding `json:"findings"`
}

func (c *DoctorCmd) Run(env *Env) error {
	a, err := env.App()
	if err != nil {
		return err
	}

	findings := a.Doctor(env.Ctx)
	problems := 0
	for _, f := range findings {
		if f.Level == agency.LevelProblem {
			problems++
		}
	}

	if c.JSON {
		if err := printJSON(env.Stdout, doctorJSON{OK: problems == 0, Problems: problems, Findings: findings}); err != nil {
			return err
		}
		if problems > 0 {
			return &ExitError{Code: 1}
		}
		return nil
	}

	for _, f := range findings {
		tag := map[string]string{agency.LevelOK: "ok     ", agency.LevelWarn: "warn   ", agency.LevelProblem: "PROBLEM"}[f.Level]
		fmt.Fprintf(env.Stdout, "%s %-13s %s\n", tag, f.Check, f.Message)

		if f.Path != "" && f.Level != agency.LevelOK {
			fmt.Fprintf(env.Stdout, "        %-13s path: %s\n", "", f.Path)
		}
		if f.Hint != "" {
			fmt.Fprintf(env.Stdout, "        %-13s hint: %s\n", "", f.Hint)
		}
	}

	if problems > 0 {
		return errs.Unhealthy(problems)
	}

	fmt.Fprintln(env.Stdout, "no problems found")
	return nil
}

// GCCmd is `gc`.
type GCCmd struct {
	JSONFlag
	DryRun         bool   `help:"List what would be removed; remove nothing (the default when stdin or stdout is not a terminal)."`
	Yes            bool   `short:"y" help:"Remove without asking (needed when not on a terminal)."`
	OlderThan      string `placeholder:"AGE" help:"Delete sandbox branches and snapshot refs of invocations landed or discarded longer ago than this (30d, 12h; default agency.gc.olderThan, else 30d)."`
	IncludePending bool   `help:"Also remove the sandbox trees of finished invocations never landed or discarded (their branches are kept)."`
	Force          bool   `help:"Also remove trees with uncommitted work, and refs whose commits are on no other branch."`
	// LandedElsewhere: a host's gc, run by the machine its agents were
	// started from, is told which of them that machine landed.
	LandedElsewhere []string `name:"landed-elsewhere" hidden:"" placeholder:"ID" help:"An invocation the machine that started it landed (a host's gc)."`
}

func (c *GCCmd) Run(env *Env) error {
	a, err := env.App()
	if err != nil {
		return err
	}

	age := c.OlderThan
	if age == "" {
		age = "30d"
		if v, ok := a.Config.Get("agency.gc.olderThan"); ok && v != "" {
			age = v
		}
	}

	d, err := agency.ParseAge(age)
	if err != nil || d < 0 {
		if c.OlderThan == "" {
			return errs.Config("agency.gc.olderThan", age, "a duration such as 30d or 12h")
		}
		return errs.New(errs.EUsage, "use a duration such as 30d or 12h", "invalid --older-than %q", age)
	}

	opts := agency.GCOptions{OlderThan: d, IncludePending: c.IncludePending, Force: c.Force, LandedElsewhere: c.LandedElsewhere}

	// Progress on a terminal only: a large repository's gc takes minutes.
	var progress *gcProgress
	if env.StderrTTY && !c.JSON {
		progress = &gcProgress{w: env.Stderr}
		opts.Progress = progress.step
		defer progress.clear()
	}

	plan, err := a.GCPlan(env.Ctx, opts)
	progress.clear()
	if err != nil {
		return err
	}

	act := c.Yes && !c.DryRun
	pending := 0
	for _, it := range plan.Items {
		if !it.Kept {
			pending++
		}
	}

	interactive := env.StdinTTY && env.StdoutTTY && !c.JSON
	if !c.Yes && !c.DryRun && interactive && pending > 0 {
		printGC(env, plan, "would remove")
		fmt.Fprintf(env.Stdout, "remove %d item(s)? [y/N] ", pending)
		line, _ := bufio.NewReader(env.Stdin).ReadString('\n')
		act = strings.EqualFold(strings.TrimSpace(line), "y") || strings.EqualFold(strings.TrimSpace(line), "yes")
		if !act {
			fmt.Fprintln(env.Stdout, "nothing removed")
			return nil
		}
	}

	if act {
		var step func(agency.GCStep)
		if progress != nil {
			step = progress.step
		}
		plan = a.GC(env.Ctx, plan, step)
		progress.clear()
	}

	if c.JSON {
		if plan.Items == nil {
			plan.Items = []agency.GCItem{} // nothing to do is [], not null
		}
		return printJSON(env.Stdout, plan)
	}

	if act {
		printGC(env, plan, "removed")
	} else if !interactive || c.DryRun {
		printGC(env, plan, "would remove")
	}

	if !act && pending > 0 && !c.DryRun {
		fmt.Fprintln(env.Stdout, "dry run (not a terminal): nothing removed; rerun with --yes to remove")
	}

	if !c.JSON {
		gcOnHosts(env, a, opts, act, age)
	}
	for _, it := range plan.Items {
		if it.Error != "" {
			return errs.New(errs.EIO, "the other items were removed; see the lines above", "gc could not remove %d item(s)", countErrors(plan))
		}
	}

	return nil
}

// gcOnHosts runs the same gc on each host this repository's agents ran
// on, in its mirror there; a host that cannot be reached is said and
// skipped.
func gcOnHosts(env *Env, a *agency.App, opts agency.GCOptions, act bool, age string) {
	opts.Progress = nil
	adoptHostStarts(env, a, act)
	for _, name := range a.RecordHosts() {
		fmt.Fprintf(env.Stdout, "host %s:\n", name)
		code, err := a.GCOnHost(env.Ctx, name, opts, act, age, agency.HostRun{Stdout: env.Stdout, Stderr: env.Stderr})
		if err == nil && code != 0 {
			err = errs.HostFailed(name, "gc", code, "")
		}
		if err != nil {
			fmt.Fprintf(env.Stderr, "warning: gc on host %s: %v\n", name, err)
		}
	}
}

// adoptHostStarts: a start on a host killed before it wrote its record
// here left an intent; gc asks the host and records the agent it started
// (a dry run only says so).
func adoptHostStarts(env *Env, a *agency.App, act bool) {
	for name, keys := range a.InterruptedHostStarts() {
		if !act {
			fmt.Fprintf(env.Stdout, "would ask   host %s about %d interrupted start(s), and record their agents here\n", name, len(keys))
			continue
		}
		ids, err := a.AdoptHostStarts(env.Ctx, name)
		if err != nil {
			fmt.Fprintf(env.Stderr, "warning: host %s: its interrupted starts stay to be asked: %v\n", name, err)
		}
		for _, id := range ids {
			fmt.Fprintf(env.Stdout, "recorded    %s: started on host %s by a start that was interrupted\n", id, name)
		}
	}
}

// gcProgress keeps one status line on a terminal's stderr: the items gc
// has decided (to remove or to keep), then those it removed and the bytes
// freed so far, each with the item at hand.
type gcProgress struct {
	w             io.Writer
	decided, kept int
	shown         bool
}

func (p *gcProgress) step(s agency.GCStep) {
	var line string
	switch s.Phase {
	case agency.GCDecided:
		p.decided++
		what := "remove"
		if s.Item.Kept {
			p.kept++
			what = "keep"
		}

		line = fmt.Sprintf("gc: %d decided (%d to remove, %d kept): %s %s %s",
			p.decided, p.decided-p.kept, p.kept, what, s.Item.Kind, s.Item.Target)
	default:
		line = fmt.Sprintf("gc: removed %d/%d, freed %s: %s %s", s.Done, s.Total, humanBytes(s.BytesFreed), s.Item.Kind, s.Item.Target)
	}

	if r := []rune(line); len(r) > 100 {
		line = string(r[:99]) + "…"
	}

	fmt.Fprintf(p.w, "\r\x1b[K%s", line)
	p.shown = true
}

// clear removes the status line (nil-safe, so callers need not check).
func (p *gcProgress) clear() {
	if p != nil && p.shown {
		fmt.Fprint(p.w, "\r\x1b[K")
		p.shown = false
	}
}

func countErrors(p *agency.GCResult) int {
	n := 0
	for _, it := range p.Items {
		if it.Error != "" {
			n++
		}
	}
	return n
}

func printGC(env *Env, plan *agency.GCResult, verb string) {
	var bytes int64
	n := 0
	for _, it := range plan.Items {
		switch {
		case it.Kept:
			fmt.Fprintf(env.Stdout, "keep          %-15s %s: %s\n", it.Kind, it.Target, it.KeptWhy)
		case it.Error != "":
			fmt.Fprintf(env.Stdout, "FAILED        %-15s %s: %s\n", it.Kind, it.Target, it.Error)
		default:
			n++
			bytes += it.Bytes
			size := ""
			if it.Bytes > 0 {
				size = " (" + humanBytes(it.Bytes) + ")"
			}
			fmt.Fprintf(env.Stdout, "%-13s %-15s %s%s: %s\n", verb, it.Kind, it.Target, size, it.Reason)
		}
	}

	if verb == "removed" {
		fmt.Fprintf(env.Stdout, "removed %d item(s), freed %s\n", n, humanBytes(plan.BytesFreed))
	} else {
		fmt.Fprintf(env.Stdout, "would remove %d item(s), freeing %s\n", n, humanBytes(bytes))
	}
}

func humanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
