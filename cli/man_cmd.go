package cli

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/alecthomas/kong"
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
	fmt.Fprintf(w, ".TH %s 1 %q \"git-agency %s\" \"Git Manual\"\n", strings.ToUpper(page), time.Now().Format("2006-01-02"), Version)
	fmt.Fprintf(w, ".SH NAME\n%s \\- %s\n", page, roff(firstSentence(app.Help)))
	fmt.Fprintf(w, ".SH SYNOPSIS\n.B %s\n<command> [<flags>]\n", roff(prog))
	fmt.Fprintf(w, ".SH DESCRIPTION\n%s\n", roff(app.Help))
	fmt.Fprintf(w, ".SH COMMANDS\n")
	var walk func(n *kong.Node)
	walk = func(n *kong.Node) {
		for _, c := range n.Children {
			if c.Hidden {
				continue
			}
			if len(c.Children) > 0 && c.DefaultCmd == nil {
				walk(c)
				continue
			}
			path := strings.TrimPrefix(c.FullPath(), app.Name+" ")
			fmt.Fprintf(w, ".TP\n.B %s %s", roff(prog), roff(path))
			for _, p := range c.Positional {
				fmt.Fprintf(w, " \\fI<%s>\\fR", roff(p.Name))
			}
			fmt.Fprintf(w, "\n%s\n", roff(c.Help))
			for _, f := range c.Flags {
				if f.Hidden || f.Name == "help" {
					continue
				}
				fmt.Fprintf(w, ".RS\n.TP\n.B \\-\\-%s", roff(f.Name))
				if !f.IsBool() {
					fmt.Fprintf(w, " \\fI%s\\fR", roff(f.FormatPlaceHolder()))
				}
				fmt.Fprintf(w, "\n%s\n.RE\n", roff(f.Help))
			}
		}
	}
	walk(app.Node)
	fmt.Fprintf(w, ".SH EXIT STATUS\n0 on success, 1 on error, 2 on a usage error. A command that follows an agent exits with the agent's exit code.\n")
	fmt.Fprintf(w, ".SH ERRORS\nErrors are printed as \\fBerror: E_CODE: message\\fR followed by \\fBhint:\\fR. The codes are stable; see the README.\n")
	fmt.Fprintf(w, ".SH SEE ALSO\n\\fBgit-agency\\fR(1), \\fBgit-sandbox\\fR(1), \\fBgit-worktree\\fR(1)\n")
}

func firstSentence(s string) string {
	if i := strings.Index(s, ". "); i > 0 {
		return s[:i]
	}
	return strings.TrimSuffix(s, ".")
}
