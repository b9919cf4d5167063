package cli

import (
	"bytes"
	"context"
	"io/fs"
	"strings"
	"testing"

	"github.com/alecthomas/kong"

	"github.com/git-agency/git-agency/errs"
)

// TestEveryCommandHasAPage keeps the command pages (cli/pages/*.md) and the
// grammars in step: every command a user can run has a page with a
// description, an example of itself, its exit status and errors that
// exist, and every page belongs to a command.
func TestEveryCommandHasAPage(t *testing.T) {
	used := map[string]bool{}
	for _, g := range []struct {
		prog    string
		grammar any
	}{{"git agency", &AgencyCLI{}}, {"git sandbox", &SandboxCLI{}}} {
		k, err := kong.New(g.grammar)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range visibleLeaves(k.Model) {
			what := g.prog + " " + strings.Join(commandWords(n), " ")
			p := commandPage(g.prog, n)
			if p == nil {
				t.Errorf("%s has no page: write cli/pages/%s.md (see the other pages and cli/pages.go)", what, strings.Join(commandWords(n), "-"))
				continue
			}
			used[p.Name] = true
			checkPage(t, what, p)
		}
	}
	files, err := fs.Glob(pageFiles, "pages/*.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		name := strings.TrimSuffix(strings.TrimPrefix(f, "pages/"), ".md")
		if !used[name] {
			t.Errorf("cli/pages/%s.md is the page of no command: rename it after its command or remove it", name)
		}
	}
}

func checkPage(t *testing.T, what string, p *cmdPage) {
	t.Helper()
	if strings.TrimSpace(p.Description) == "" {
		t.Errorf("%s: its page has no description (the text before the first heading)", what)
	}
	if !strings.Contains(p.Section("Examples"), what) {
		t.Errorf("%s: its page's Examples section has no example running %q", what, what)
	}
	if p.Section("Exit status") == "" {
		t.Errorf("%s: its page has no Exit status section", what)
	}
	body := p.Section("Errors")
	if body == "" {
		t.Errorf("%s: its page has no Errors section", what)
	}
	for _, e := range pageErrors(body) {
		if errs.Meaning[errs.Code(e.Code)] == "" {
			t.Errorf("%s: its page names %s, which is no error code (errs/codes.go)", what, e.Code)
		}
	}
}

// TestHelpShowsExamples: --help of every command ends with its examples
// and says where its whole page is; help and man print that page.
func TestHelpShowsExamples(t *testing.T) {
	for _, g := range []struct {
		prog    string
		grammar func() any
	}{{"git agency", func() any { return &AgencyCLI{} }}, {"git sandbox", func() any { return &SandboxCLI{} }}} {
		k, err := kong.New(g.grammar())
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range visibleLeaves(k.Model) {
			words := commandWords(n)
			what := g.prog + " " + strings.Join(words, " ")
			out := runCLI(t, g.prog, g.grammar(), append(append([]string{}, words...), "--help"))
			_, examples, _ := strings.Cut(out, "\nExamples:\n")
			if !strings.Contains(examples, what) {
				t.Errorf("%s --help shows no example of itself:\n%s", what, out)
			}
			out = runCLI(t, g.prog, g.grammar(), append([]string{"help"}, words...))
			if !strings.Contains(out, "EXAMPLES\n") || !strings.Contains(out, "SYNOPSIS\n    "+what) {
				t.Errorf("%s help %s does not print the page:\n%s", g.prog, strings.Join(words, " "), out)
			}
			out = runCLI(t, g.prog, g.grammar(), []string{"man", pageName(g.prog, n)})
			if !strings.Contains(out, ".SH EXAMPLES\n") || !strings.Contains(out, ".SH OPTIONS\n") && len(commandOptions(n)) > 0 {
				t.Errorf("%s man %s does not print the man page:\n%s", g.prog, pageName(g.prog, n), out)
			}
		}
	}
}

func runCLI(t *testing.T, prog string, grammar any, args []string) string {
	t.Helper()
	var stdout, stderr bytes.Buffer
	env := &Env{Ctx: context.Background(), Stdin: &bytes.Buffer{}, Stdout: &stdout, Stderr: &stderr, Dir: t.TempDir(), Prog: prog}
	if code := Run(env, grammar, args); code != 0 {
		t.Errorf("%s %s: exit %d\n%s", prog, strings.Join(args, " "), code, stderr.String())
	}
	return stdout.String()
}
