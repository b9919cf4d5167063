package cli

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/alecthomas/kong"

	"github.com/git-agency/git-agency/errs"
)

// ManCmd renders the grammar as a man page (roff). `make install` installs
// its output as git-agency.1 and git-sandbox.1, which is what git shows for
// `git agency --help`.
type ManCmd struct{}

func (c *ManCmd) Run(env *Env, app *kong.Kong) error {
	writeMan(env.Stdout, env.Prog, app.Model)
	return nil
}

func roff(s string) string {
	s = strings.ReplaceAll(s, `\`, `\e`)
	s = strings.ReplaceAll(s, "-", `\-`)
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, ".") || strings.HasPrefix(l, "'") {
			lines[i] = `\&` + l
		}
	}
	return strings.Join(lines, "\n")
}

func writeMan(w io.Writer, prog string, app *kong.Application) {
	page := strings.ReplaceAll(prog, " ", "-")
	fmt.Fprintf(w, ".TH %s 1 %q \"git-agency %s\" \"Git Manual\"\n", strings.ToUpper(page), time.Now().Format("2006-01-02"), version())
	fmt.Fprintf(w, ".SH NAME\n%s \\- %s\n", page, roff(firstSentence(app.Help)))
	fmt.Fprintf(w, ".SH SYNOPSIS\n.B %s\n<command> [<flags>] [<args>]\n.br\n.B %s\n\\-\\-help | \\-\\-version\n", roff(prog), roff(prog))
	fmt.Fprintf(w, ".SH DESCRIPTION\n%s\n", roff(app.Help))
	fmt.Fprintf(w, ".PP\nCommands that take a worktree accept its \\fBname\\fR, its \\fBid\\fR or a \\fBunique id prefix\\fR; commands that take an invocation accept its id or a unique prefix. Every read command has \\fB\\-\\-json\\fR.\n")
	fmt.Fprintf(w, ".SH COMMANDS\n")
	var walk func(n *kong.Node, parent string)
	walk = func(n *kong.Node, parent string) {
		for _, c := range n.Children {
			if c.Hidden {
				continue
			}
			path := strings.TrimSpace(parent + " " + c.Name)
			if len(c.Children) > 0 && c.DefaultCmd == nil {
				fmt.Fprintf(w, ".SS %s %s\n%s\n", roff(prog), roff(path), roff(c.Help))
				walk(c, path)
				continue
			}
			fmt.Fprintf(w, ".TP\n.B %s %s", roff(prog), roff(path))
			for _, p := range c.Positional {
				fmt.Fprintf(w, " \\fI<%s>\\fR", roff(p.Name))
				if p.IsCumulative() {
					fmt.Fprintf(w, "...")
				}
			}
			fmt.Fprintf(w, "\n%s\n", roff(c.Help))
			if len(c.Aliases) > 0 {
				fmt.Fprintf(w, "Also: %s.\n", roff(strings.Join(c.Aliases, ", ")))
			}
			for _, p := range c.Positional {
				if p.Help == "" {
					continue
				}
				fmt.Fprintf(w, ".RS\n.TP\n.I <%s>\n%s\n.RE\n", roff(p.Name), roff(p.Help))
			}
			for _, f := range c.Flags {
				if f.Hidden || f.Name == "help" {
					continue
				}
				fmt.Fprintf(w, ".RS\n.TP\n.B \\-\\-%s", roff(f.Name))
				if !f.IsBool() {
					fmt.Fprintf(w, " \\fI%s\\fR", roff(f.FormatPlaceHolder()))
				}
				help := f.Help
				if f.Enum != "" {
					help += " One of: " + strings.ReplaceAll(f.Enum, ",", ", ") + "."
				}
				fmt.Fprintf(w, "\n%s\n.RE\n", roff(help))
			}
		}
	}
	walk(app.Node, "")
	fmt.Fprintf(w, ".SH CONFIGURATION\nEvery setting is read with \\fBgit config\\fR (any scope) under \\fBagency.\\fR; flags win over configuration.\n")
	for _, k := range configKeys {
		fmt.Fprintf(w, ".TP\n.B %s\n%s", roff(k.Key), roff(k.Meaning))
		if k.Default != "" {
			fmt.Fprintf(w, " (default: %s)", roff(k.Default))
		}
		fmt.Fprintf(w, ".\n")
	}
	fmt.Fprintf(w, ".SH ENVIRONMENT\n.TP\n.B AGENCY_DATA_DIR\nThe data directory (wins over agency.dataDir).\n.TP\n.B NO_COLOR\nNo colour in output.\n.TP\n.B AGENCY_TRACE\nSet to 1: print every subprocess (git, tmux, the supervisor, the agent) and its duration on stderr.\n")
	fmt.Fprintf(w, ".SH FILES\n.TP\n.B $DATA/repos/<repo_id>/\nOne repository's records: repo.json, .lock, integration_worktrees/<id>/{meta.json,tree/}, sandboxes/<inv>/{checkpoints.json,logs/,tree/}, invocations/<inv>/{meta.json,events.jsonl,supervisor.log}.\n"+
		".TP\n.B .worktreeinclude\nAt the repository root, gitignore syntax: ignored files copied into every new integration worktree and sandbox (see agency.include).\n"+
		".TP\n.B .cursor/worktrees.json, .codex/environments/environment.toml\nSetups the project declares for other agent tools: run in new sandboxes (Cursor's first) once approved with 'setup approve'.\n")
	fmt.Fprintf(w, ".SH EXIT STATUS\n0 on success, 1 on error, 2 on a usage error. A command that follows an agent exits with the agent's exit code.\n")
	fmt.Fprintf(w, ".SH ERRORS\nErrors are printed on stderr as \\fBerror: E_CODE: message\\fR followed by \\fBhint:\\fR (with \\-\\-json, as one JSON object). The codes are stable:\n")
	codes := make([]string, 0, len(errs.Meaning))
	for c := range errs.Meaning {
		codes = append(codes, string(c))
	}
	sort.Strings(codes)
	for _, c := range codes {
		fmt.Fprintf(w, ".TP\n.B %s\n%s.\n", roff(c), roff(errs.Meaning[errs.Code(c)]))
	}
	fmt.Fprintf(w, ".SH SEE ALSO\n\\fBgit-agency\\fR(1), \\fBgit-sandbox\\fR(1), \\fBgit-worktree\\fR(1)\n")
}

func firstSentence(s string) string {
	if i := strings.Index(s, ". "); i > 0 {
		return s[:i]
	}
	return strings.TrimSuffix(s, ".")
}
