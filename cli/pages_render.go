package cli

import (
	"fmt"
	"io"
	"regexp"
	"strings"

	"github.com/alecthomas/kong"

	"github.com/git-agency/git-agency/errs"
)

// A command page is rendered two ways from the same parts: as a man page
// (roff) and as text for `git agency help <command>`. Both take the
// synopsis and options from the grammar and the rest from the page's
// Markdown (paragraphs, "- " lists, "1. " lists, ``` blocks, "### "
// headings, `code`, **bold** and [links](…)).

// pageOption is one line of OPTIONS: a positional argument or a flag.
type pageOption struct{ Term, Help string }

func commandOptions(n *kong.Node) []pageOption {
	var out []pageOption
	for _, p := range n.Positional {
		term := "<" + p.Name + ">"
		if p.IsCumulative() {
			term += "..."
		}
		out = append(out, pageOption{term, p.Help})
	}

	for _, f := range n.Flags {
		if f.Hidden || f.Name == "help" {
			continue
		}

		term := "--" + f.Name
		if f.Short != 0 {
			term = "-" + string(f.Short) + ", " + term
		}
		if !f.IsBool() {
			term += " " + f.FormatPlaceHolder()
		}

		help := f.Help
		if f.Enum != "" {
			help += " One of: " + strings.ReplaceAll(f.Enum, ",", ", ") + "."
		}

		out = append(out, pageOption{term, help})
	}

	return out
}

// pageError is one item of a page's Errors section: the code and what the
// page says about it for this command.
type pageError struct{ Code, Text string }

var pageErrorItem = regexp.MustCompile("^- `(E_[A-Z_]+)`:?\\s*(.*)$")

// pageErrors are the items of an Errors section ("- `E_CODE`: what to do").
func pageErrors(body string) []pageError {
	var out []pageError
	for _, line := range strings.Split(body, "\n") {
		if m := pageErrorItem.FindStringSubmatch(line); m != nil {
			out = append(out, pageError{m[1], m[2]})
			continue
		}
		if len(out) > 0 && strings.HasPrefix(line, "  ") {
			out[len(out)-1].Text += " " + strings.TrimSpace(line)
		}
	}
	return out
}

// errorLine is an error's meaning (errs.Meaning) then the page's words.
func errorLine(e pageError) string {
	m := errs.Meaning[errs.Code(e.Code)]
	if m == "" || e.Text == "" {
		return m + e.Text
	}
	return m + ". " + e.Text
}

// writeManPage writes the man page of command n of prog.
func writeManPage(w io.Writer, prog string, n *kong.Node, p *cmdPage) {
	name := pageName(prog, n)
	fmt.Fprintf(w, ".TH %s 1 %q \"git-agency %s\" \"Git Manual\"\n", strings.ToUpper(name), manDate(), version())
	fmt.Fprintf(w, ".SH NAME\n%s \\- %s\n", name, roff(firstSentence(n.Help)))
	fmt.Fprintf(w, ".SH SYNOPSIS\n.nf\n\\fB%s %s\\fR\n.fi\n", roff(prog), roff(n.Summary()))
	fmt.Fprintf(w, ".SH DESCRIPTION\n%s\n", roff(n.Help))
	fmt.Fprint(w, mdRoff(p.Description))

	if opts := commandOptions(n); len(opts) > 0 {
		fmt.Fprintf(w, ".SH OPTIONS\n")
		for _, o := range opts {
			fmt.Fprintf(w, ".TP\n.B %s\n%s\n", roff(o.Term), roff(o.Help))
		}
	}

	for _, s := range p.Sections {
		if strings.EqualFold(s.Title, "See also") {
			continue
		}

		fmt.Fprintf(w, ".SH %s\n", roff(strings.ToUpper(s.Title)))

		if strings.EqualFold(s.Title, "Errors") {
			for _, e := range pageErrors(s.Body) {
				fmt.Fprintf(w, ".TP\n.B %s\n%s\n", roff(e.Code), mdInlineRoff(errorLine(e)))
			}
			continue
		}

		fmt.Fprint(w, mdRoff(s.Body))
	}

	fmt.Fprintf(w, ".SH SEE ALSO\n%s.PP\n\\fBgit-agency\\fR(1), \\fBgit-sandbox\\fR(1)\n", mdRoff(p.Section("See also")))
}

// writeTextPage writes the page of command n of prog as text (help).
func writeTextPage(w io.Writer, prog string, n *kong.Node, p *cmdPage) {
	ind := func(s string) string { return indentBy(mdText(s), "    ") }
	fmt.Fprintf(w, "NAME\n    %s %s - %s\n\n", prog, strings.Join(commandWords(n), " "), firstSentence(n.Help))
	fmt.Fprintf(w, "SYNOPSIS\n    %s %s\n\n", prog, n.Summary())
	fmt.Fprintf(w, "DESCRIPTION\n%s\n\n%s\n", indentBy(n.Help, "    "), ind(p.Description))

	if opts := commandOptions(n); len(opts) > 0 {
		fmt.Fprintf(w, "\nOPTIONS\n")
		for _, o := range opts {
			fmt.Fprintf(w, "    %s\n        %s\n", o.Term, o.Help)
		}
	}

	for _, s := range p.Sections {
		if strings.EqualFold(s.Title, "See also") {
			continue
		}

		fmt.Fprintf(w, "\n%s\n", strings.ToUpper(s.Title))

		if strings.EqualFold(s.Title, "Errors") {
			for _, e := range pageErrors(s.Body) {
				fmt.Fprintf(w, "    %s\n        %s\n", e.Code, mdText(errorLine(e)))
			}
			continue
		}

		fmt.Fprintf(w, "%s\n", ind(s.Body))
	}

	fmt.Fprintf(w, "\nSEE ALSO\n%s\n    man %s; %s help (every command)\n", indentBy(mdText(p.Section("See also")), "    "), pageName(prog, n), prog)
}

// examplesHelp is what --help adds after the flags: the page's examples
// and where the whole page is.
func examplesHelp(prog string, n *kong.Node, p *cmdPage) string {
	var b strings.Builder
	if ex := p.Section("Examples"); ex != "" {
		b.WriteString("\nExamples:\n")
		b.WriteString(indentBy(mdText(ex), "  "))
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "\nThe whole page: %s help %s (or man %s).\n", prog, strings.Join(commandWords(n), " "), pageName(prog, n))
	return b.String()
}

func indentBy(s, by string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if l != "" {
			lines[i] = by + l
		}
	}
	return strings.Join(lines, "\n")
}

var (
	mdLink = regexp.MustCompile("\\[(`[^`]*`|[^\\]]+)\\]\\([^)]+\\)")
	mdBold = regexp.MustCompile(`\*\*([^*]+)\*\*`)
)

// mdText is Markdown as plain text: fences, emphasis markers and link
// targets dropped, code spans kept as they read.
func mdText(s string) string {
	s = spansPerLine(s)
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, "```") {
			continue
		}
		l = mdLink.ReplaceAllString(l, "$1")
		l = mdBold.ReplaceAllString(l, "$1")
		out = append(out, strings.ReplaceAll(l, "`", ""))
	}
	return strings.Join(out, "\n")
}

// mdInlineRoff is one Markdown line in roff: `code` and **bold** bold
// (code inside bold too), links as their text.
func mdInlineRoff(s string) string {
	s = mdLink.ReplaceAllString(s, "$1")
	var b strings.Builder
	bold := false
	font := func() string {
		if bold {
			return `\fB`
		}
		return `\fR`
	}
	for i, part := range strings.Split(s, "`") {
		if i%2 == 1 {
			b.WriteString(`\fB` + roff(part) + font())
			continue
		}

		for j, seg := range strings.Split(part, "**") {
			if j > 0 {
				bold = !bold
				b.WriteString(font())
			}
			b.WriteString(roff(seg))
		}
	}

	if bold {
		b.WriteString(`\fR`)
	}

	return b.String()
}

// spansPerLine closes **bold** and `code` at each line end and opens them
// again on the next (outside ``` blocks), so that a line-by-line rendering
// sees every pair.
func spansPerLine(s string) string {
	lines := strings.Split(s, "\n")
	var out, chunk []string
	flush := func() {
		t := strings.Join(chunk, "\n")
		t = mdCode.ReplaceAllStringFunc(t, func(m string) string { return strings.ReplaceAll(m, "\n", "`\n`") })
		t = mdBold.ReplaceAllStringFunc(t, func(m string) string { return strings.ReplaceAll(m, "\n", "**\n**") })
		if len(chunk) > 0 {
			out = append(out, t)
		}
		chunk = nil
	}
	fenced := false
	for _, l := range lines {
		if strings.HasPrefix(l, "```") {
			flush()
			fenced = !fenced
			out = append(out, l)
			continue
		}

		if fenced {
			out = append(out, l)
			continue
		}

		chunk = append(chunk, l)
	}

	flush()
	return strings.Join(out, "\n")
}

var mdCode = regexp.MustCompile("`[^`]*`")

// mdRoff is a block of Markdown in roff.
func mdRoff(s string) string {
	var b strings.Builder
	lines := strings.Split(spansPerLine(s), "\n")
	para := true // the next text line starts a paragraph
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		switch {
		case strings.HasPrefix(l, "```"):
			// A fenced block, as a no-fill block; i ends on its closing
			// fence.
			b.WriteString(".PP\n.RS 4\n.nf\n")
			for i++; i < len(lines) && !strings.HasPrefix(lines[i], "```"); i++ {
				fmt.Fprintf(&b, "%s\n", roff(lines[i]))
			}
			b.WriteString(".fi\n.RE\n")
			para = true
		case strings.HasPrefix(l, "|"):
			if i+1 >= len(lines) || !strings.HasPrefix(lines[i+1], "|---") { // not the header row
				roffTableRow(&b, l)
			}
			para = true
		case l == "":
			para = true
		case strings.HasPrefix(l, "## "):
			fmt.Fprintf(&b, ".SH %s\n", mdInlineRoff(strings.ToUpper(l[3:])))
			para = true
		case strings.HasPrefix(l, "### "):
			fmt.Fprintf(&b, ".SS %s\n", mdInlineRoff(l[4:]))
			para = true
		case strings.HasPrefix(l, "- "):
			fmt.Fprintf(&b, ".IP \\(bu 2\n%s\n", mdInlineRoff(l[2:]))
			para = false
		case numbered.MatchString(l):
			m := numbered.FindStringSubmatch(l)
			fmt.Fprintf(&b, ".IP %s 4\n%s\n", m[1], mdInlineRoff(m[2]))
			para = false
		default:
			if para {
				b.WriteString(".PP\n")
				para = false
			}
			fmt.Fprintf(&b, "%s\n", mdInlineRoff(strings.TrimSpace(l)))
		}
	}

	return b.String()
}

// roffTableRow writes a Markdown table row as a tagged paragraph: the
// first cell the tag, the others its text (the separator row is left out).
func roffTableRow(b *strings.Builder, l string) {
	cells := strings.Split(strings.Trim(l, "| "), " | ")
	for i := range cells {
		cells[i] = strings.ReplaceAll(cells[i], `\|`, "|")
	}
	if strings.HasPrefix(cells[0], "---") || len(cells) < 2 {
		return
	}
	fmt.Fprintf(b, ".TP\n%s\n%s\n", mdInlineRoff(cells[0]), mdInlineRoff(strings.Join(cells[1:], " — ")))
}

// writeTopicMan writes a topic page of the manual (Markdown) as the man
// page name(7).
func writeTopicMan(w io.Writer, name, text string) {
	title, body, _ := strings.Cut(text, "\n")
	fmt.Fprintf(w, ".TH %s 7 %q \"git-agency %s\" \"Git Manual\"\n", strings.ToUpper(name), manDate(), version())
	fmt.Fprintf(w, ".SH NAME\n%s \\- %s\n.SH DESCRIPTION\n", name, mdInlineRoff(strings.TrimLeft(title, "# ")))
	fmt.Fprint(w, mdRoff(body))
	fmt.Fprintf(w, ".SH SEE ALSO\n\\fBgit-agency\\fR(1), \\fBgit-sandbox\\fR(1)\n")
}

var numbered = regexp.MustCompile(`^([0-9]+\.) (.*)$`)
