package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/alecthomas/kong"

	"github.com/git-agency/git-agency/docs"
	"github.com/git-agency/git-agency/errs"
)

// HelpCmd prints a command's page (`git agency help agent land`), a topic
// of the manual (`git agency help landing`), or the list of both.
type HelpCmd struct {
	Command []string `arg:"" optional:"" help:"The command, in the words you type after the program name (agent land)."`
}

func (c *HelpCmd) Run(env *Env, app *kong.Kong) error {
	if len(c.Command) == 0 {
		writeCommandList(env.Stdout, env.Prog, app.Model.Node)
		return nil
	}

	n := findCommand(app.Model.Node, c.Command)
	if n == nil && len(c.Command) == 1 {
		if text, ok := docs.Topic(c.Command[0]); ok {
			fmt.Fprintln(env.Stdout, mdText(text))
			return nil
		}
	}

	if n == nil || n.Hidden {
		return errs.NoSuchCommand(env.Prog, strings.Join(c.Command, " "))
	}

	if len(n.Children) > 0 {
		writeCommandList(env.Stdout, env.Prog, n)
		return nil
	}

	p := commandPage(env.Prog, n)
	if p == nil {
		return errs.NoSuchCommand(env.Prog, strings.Join(c.Command, " "))
	}

	writeTextPage(env.Stdout, env.Prog, n, p)
	return nil
}

// findCommand is the command node words name below n (names or aliases).
func findCommand(n *kong.Node, words []string) *kong.Node {
	for _, w := range words {
		var next *kong.Node
		for _, c := range n.Children {
			if c.Name == w || containsString(c.Aliases, w) {
				next = c
			}
		}

		if next == nil {
			return nil
		}

		n = next
	}

	return n
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// writeCommandList lists the commands under n with their summaries, and
// how to read each one's page.
func writeCommandList(w io.Writer, prog string, n *kong.Node) {
	if n.Type == kong.ApplicationNode {
		fmt.Fprintf(w, "%s - %s\n\n", prog, description(prog))
	}
	fmt.Fprintf(w, "Commands (%s help <command> for one's page):\n", prog)
	for _, c := range visibleLeavesOf(n) {
		fmt.Fprintf(w, "    %-22s %s\n", strings.Join(commandWords(c), " "), firstSentence(c.Help))
	}
	if n.Type == kong.ApplicationNode {
		fmt.Fprintf(w, "\nTopics of the manual (%s help <topic>; man 7 git-agency-<topic>):\n    %s\n", prog, strings.Join(docs.Topics(), ", "))
	}
	fmt.Fprintf(w, "\nEvery command's page is also a man page: man %s-<command> (its words joined by '-').\n", strings.ReplaceAll(prog, " ", "-"))
}

// helpPrinter is kong's help printer with the command's page added: the
// first paragraph of its description before the flags, its examples and
// where the whole page is after them.
func helpPrinter(prog string) kong.HelpPrinter {
	return func(o kong.HelpOptions, ctx *kong.Context) error {
		sel := ctx.Selected()
		var p *cmdPage
		if sel != nil && len(sel.Children) == 0 {
			p = commandPage(prog, sel)
		}
		if p != nil {
			sel.Detail = mdText(firstParagraph(p.Description))
		}
		if err := kong.DefaultHelpPrinter(o, ctx); err != nil {
			return err
		}
		if p == nil {
			return nil
		}

		_, err := io.WriteString(ctx.Stdout, examplesHelp(prog, sel, p))
		return err
	}
}

func firstParagraph(s string) string {
	if i := strings.Index(s, "\n\n"); i >= 0 {
		return s[:i]
	}
	return s
}
