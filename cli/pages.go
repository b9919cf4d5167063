package cli

import (
	"embed"
	"reflect"
	"strings"

	"github.com/alecthomas/kong"
)

// pageFiles are the command pages: one Markdown source per command, from
// which its --help (description and examples), its man page and
// `git agency help <command>` are made. The synopsis and the options come
// from the grammar (each flag's help string), so a page holds what the
// grammar cannot say: the description, examples, exit status and errors.
//
// A page is named after the command's path in `git agency` with '-'
// between the words (agent-land.md for `git agency agent land`,
// gc.md for `git agency gc`). A `git sandbox` command that runs the same
// command struct as a `git agency` one uses that page, its examples
// rewritten to the sandbox's words; one of its own is sandbox-<name>.md.
// TestEveryCommandHasAPage keeps the pages and the grammars in step.
//
//go:embed pages/*.md
var pageFiles embed.FS

// cmdPage is one command page, split at its "## " headings.
type cmdPage struct {
	Name        string // file name without .md: "agent-land"
	Description string // the Markdown before the first heading
	Sections    []pageSection
}

type pageSection struct{ Title, Body string }

// Section is the body of the section titled title ("" when there is none).
func (p *cmdPage) Section(title string) string {
	for _, s := range p.Sections {
		if strings.EqualFold(s.Title, title) {
			return s.Body
		}
	}
	return ""
}

// loadPage reads and splits the page named name; nil when there is none.
func loadPage(name string) *cmdPage {
	b, err := pageFiles.ReadFile("pages/" + name + ".md")
	if err != nil {
		return nil
	}
	return parsePage(name, string(b))
}

func parsePage(name, text string) *cmdPage {
	p := &cmdPage{Name: name}
	var cur *pageSection
	var body []string
	flush := func() {
		t := strings.Trim(strings.Join(body, "\n"), "\n")
		if cur == nil {
			p.Description = t
		} else {
			cur.Body = t
			p.Sections = append(p.Sections, *cur)
		}
		body = nil
	}
	fenced := false
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, "```") {
			fenced = !fenced
		}

		if !fenced && strings.HasPrefix(line, "## ") {
			flush()
			cur = &pageSection{Title: strings.TrimSpace(line[3:])}
			continue
		}

		body = append(body, line)
	}

	flush()
	return p
}

// commandWords are a command node's names from the program down ("agent",
// "land"), without aliases.
func commandWords(n *kong.Node) []string {
	var words []string
	for ; n != nil && n.Type == kong.CommandNode; n = n.Parent {
		words = append([]string{n.Name}, words...)
	}
	return words
}

// visibleLeaves are the commands of a grammar a user runs: not hidden, not
// groups.
func visibleLeaves(app *kong.Application) []*kong.Node {
	return visibleLeavesOf(app.Node)
}

// visibleLeavesOf are the visible commands below n.
func visibleLeavesOf(top *kong.Node) []*kong.Node {
	var out []*kong.Node
	var walk func(n *kong.Node)
	walk = func(n *kong.Node) {
		for _, c := range n.Children {
			if c.Hidden {
				continue
			}
			if len(c.Children) > 0 {
				walk(c)
				continue
			}
			out = append(out, c)
		}
	}
	walk(top)
	return out
}

// commandPage is the page of command n of program prog, with its examples
// in prog's words; nil when it has none.
func commandPage(prog string, n *kong.Node) *cmdPage {
	words := commandWords(n)
	if prog != "git sandbox" {
		return loadPage(strings.Join(words, "-"))
	}
	if p := loadPage("sandbox-" + strings.Join(words, "-")); p != nil {
		return p
	}

	agencyWords := sharedAgencyCommand(n)
	if agencyWords == nil {
		return nil
	}

	p := loadPage(strings.Join(agencyWords, "-"))
	if p == nil {
		return nil
	}

	from := "git agency " + strings.Join(agencyWords, " ")
	to := "git sandbox " + strings.Join(words, " ")
	for i, s := range p.Sections {
		if strings.EqualFold(s.Title, "Examples") {
			p.Sections[i].Body = strings.ReplaceAll(s.Body, from, to)
		}
	}

	return p
}

// sharedAgencyCommand is the path of the `git agency` command that runs the
// same command struct as the `git sandbox` command n (nil when none does).
func sharedAgencyCommand(n *kong.Node) []string {
	agency, err := kong.New(&AgencyCLI{})
	if err != nil {
		return nil
	}
	want := nodeType(n)
	for _, c := range visibleLeaves(agency.Model) {
		if nodeType(c) == want {
			return commandWords(c)
		}
	}
	return nil
}

func nodeType(n *kong.Node) reflect.Type {
	if !n.Target.IsValid() {
		return nil
	}
	return n.Target.Type()
}

// pageName is the man page name of command n of prog ("git-agency-agent-land").
func pageName(prog string, n *kong.Node) string {
	return strings.ReplaceAll(prog, " ", "-") + "-" + strings.Join(commandWords(n), "-")
}
