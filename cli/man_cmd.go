package cli

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/alecthomas/kong"

	"github.com/git-agency/git-agency/docs"
	"github.com/git-agency/git-agency/errs"
)

// ManCmd prints the man pages (roff): without an argument this program's
// page (git-agency.1, git-sandbox.1), with one the page of that name
// (git-agency-agent-land, or git-agency-landing.7 for a topic of the
// manual), with --list every page's file name. `make install` installs
// them all, which is what `man` and `git agency --help` show.
type ManCmd struct {
	Page string `arg:"" optional:"" help:"The page to print (git-agency-agent-land, git-agency-landing.7); default: the program's own."`
	List bool   `help:"Print the file names of this program's pages (git-agency-agent-land.1), one a line."`
}

func (c *ManCmd) Run(env *Env, app *kong.Kong) error {
	top := strings.ReplaceAll(env.Prog, " ", "-")
	if c.List {
		fmt.Fprintln(env.Stdout, top+".1")

		for _, n := range visibleLeaves(app.Model) {
			fmt.Fprintln(env.Stdout, pageName(env.Prog, n)+".1")
		}
		for _, t := range manTopics(env.Prog) {
			fmt.Fprintln(env.Stdout, top+"-"+t+".7")
		}

		return nil
	}

	name, section, _ := strings.Cut(c.Page, ".")
	if name == "" || name == top && section != "7" {
		writeMan(env.Stdout, env.Prog, app.Model)
		return nil
	}

	if section != "7" {
		for _, n := range visibleLeaves(app.Model) {
			if p := commandPage(env.Prog, n); p != nil && pageName(env.Prog, n) == name {
				writeManPage(env.Stdout, env.Prog, n, p)
				return nil
			}
		}
	}

	if t, ok := strings.CutPrefix(name, top+"-"); ok && section != "1" && containsString(manTopics(env.Prog), t) {
		text, _ := docs.Topic(t)
		writeTopicMan(env.Stdout, name, text)
		return nil
	}

	return errs.NoSuchCommand(env.Prog, c.Page)
}

// manTopics are the topic pages installed as man pages of prog: the
// manual's topics go with git-agency.
func manTopics(prog string) []string {
	if prog != "git agency" {
		return nil
	}
	return docs.Topics()
}

// roff escapes text for a man page: backslashes, hyphens (so that flags
// copy as typed), a leading '.' or "'", and every character beyond ASCII
// as \[uXXXX] (groff reads pages as Latin-1 unless told otherwise).
func roff(s string) string {
	s = strings.ReplaceAll(s, `\`, `\e`)
	s = strings.ReplaceAll(s, "-", `\-`)
	s = nonASCII(s)
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, ".") || strings.HasPrefix(l, "'") {
			lines[i] = `\&` + l
		}
	}
	return strings.Join(lines, "\n")
}

func nonASCII(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r < 128 {
			b.WriteRune(r)
			continue
		}
		fmt.Fprintf(&b, `\[u%04X]`, r)
	}
	return b.String()
}

func writeMan(w io.Writer, prog string, app *kong.Application) {
	page := strings.ReplaceAll(prog, " ", "-")
	fmt.Fprintf(w, ".TH %s 1 %q \"git-agency %s\" \"Git Manual\"\n", strings.ToUpper(page), manDate(), version())
	fmt.Fprintf(w, ".SH NAME\n%s \\- %s\n", page, roff(firstSentence(app.Help)))
	fmt.Fprintf(w, ".SH SYNOPSIS\n.B %s\n<command> [<flags>] [<args>]\n.br\n.B %s\n\\-\\-help | \\-\\-version\n", roff(prog), roff(prog))
	fmt.Fprintf(w, ".SH DESCRIPTION\n%s\n", roff(app.Help))
	fmt.Fprintf(w, ".PP\nCommands that take a worktree accept its \\fBname\\fR, its \\fBid\\fR or a \\fBunique id prefix\\fR; commands that take an invocation accept its id or a unique prefix. Every read command has \\fB\\-\\-json\\fR.\n")
	fmt.Fprintf(w, ".SH COMMANDS\nEach command has its own page, which \\fB%s help <command>\\fR prints too.\n", roff(prog))

	for _, n := range visibleLeaves(app) {
		fmt.Fprintf(w, ".TP\n.B %s %s\n%s See \\fB%s\\fR(1).\n", roff(prog), roff(strings.Join(commandWords(n), " ")), roff(n.Help), roff(pageName(prog, n)))
	}

	fmt.Fprintf(w, ".SH OPTIONS\n")

	for _, f := range app.Flags {
		if f.Hidden || f.Name == "help" {
			continue
		}
		fmt.Fprintf(w, ".TP\n.B \\-\\-%s\n%s\n", roff(f.Name), roff(f.Help))
	}

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
		fmt.Fprintf(w, ".TP\n.B %s\n%s. %s.\n", roff(c), roff(errs.Meaning[errs.Code(c)]), roff(errs.Fix[errs.Code(c)]))
	}

	fmt.Fprintf(w, ".SH SEE ALSO\n\\fBgit-agency\\fR(1), \\fBgit-sandbox\\fR(1), \\fBgit-worktree\\fR(1)\n")
}

func firstSentence(s string) string {
	if i := strings.Index(s, ". "); i > 0 {
		return s[:i]
	}
	return strings.TrimSuffix(s, ".")
}
