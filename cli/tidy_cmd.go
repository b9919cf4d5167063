package cli

import (
	"bufio"
	"fmt"
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
	opts := agency.GCOptions{OlderThan: d, IncludePending: c.IncludePending, Force: c.Force}
	plan, err := a.GCPlan(env.Ctx, opts)
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
		plan = a.GC(env.Ctx, plan)
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
	for _, it := range plan.Items {
		if it.Error != "" {
			return errs.New(errs.EIO, "the other items were removed; see the lines above", "gc could not remove %d item(s)", countErrors(plan))
		}
	}
	return nil
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
