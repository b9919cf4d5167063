package gitagency_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

// TestREADMEIsShortAndLeadsToTheQuickStart: the README stays a page a
// newcomer reads (at most 300 lines), and its first screen links the
// permission setup claude and codex need, making sandboxes ready and
// checked (.worktreeinclude, agency.setup, agency.verify), landing with
// --apply, and what to do when a land would conflict.
func TestREADMEIsShortAndLeadsToTheQuickStart(t *testing.T) {
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > 300 {
		t.Errorf("README.md has %d lines (at most 300): move the detail to docs/", len(lines))
	}
	firstScreen := strings.Join(lines[:min(len(lines), 30)], "\n")
	for _, anchor := range []string{"#1-once-let-the-agent-work-without-asking", "#once-per-project-ready-sandboxes-and-a-check", "#3-review-and-land", "#when-the-forecast-says-conflicts"} {
		if !strings.Contains(firstScreen, "]("+anchor+")") {
			t.Errorf("README.md's first 30 lines do not link %s", anchor)
		}
	}
	// (and the two things every real project needed in its first hour:
	// a ready sandbox, and a check before landing)
	for _, must := range []string{"agency.runner.claude.headlessArg", "agency.runner.codex.headlessArg", "land <id> --apply",
		"git config agency.verify", "git config agency.setup", ".worktreeinclude", "docs/ready-sandboxes.md"} {
		if !strings.Contains(string(b), must) {
			t.Errorf("README.md's quick start lost %q", must)
		}
	}
}

var (
	mdLinkRE   = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	mdCodeSpan = regexp.MustCompile("`[^`]*`")
)

// TestDocsLinksResolve: every relative link of README.md, CONTRIBUTING.md
// and docs/*.md names a file that exists, and a #fragment a heading of it.
func TestDocsLinksResolve(t *testing.T) {
	pages, err := filepath.Glob("docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	pages = append(pages, "README.md", "CONTRIBUTING.md")
	for _, page := range pages {
		for _, link := range markdownLinks(t, page) {
			if strings.Contains(link, "://") || strings.HasPrefix(link, "mailto:") {
				continue
			}
			file, frag, _ := strings.Cut(link, "#")
			target := page
			if file != "" {
				target = filepath.Join(filepath.Dir(page), file)
			}
			if _, err := os.Stat(target); err != nil {
				t.Errorf("%s links %s: %s does not exist", page, link, target)
				continue
			}
			if frag != "" && strings.HasSuffix(target, ".md") && !headingSlugs(t, target)[frag] {
				t.Errorf("%s links %s: %s has no heading with that anchor", page, link, target)
			}
		}
	}
}

func markdownLinks(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var links []string
	fenced := false
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "```") {
			fenced = !fenced
		}
		if fenced {
			continue
		}
		for _, m := range mdLinkRE.FindAllStringSubmatch(mdCodeSpan.ReplaceAllString(line, ""), -1) {
			links = append(links, m[1])
		}
	}
	return links
}

// headingSlugs are the anchors GitHub gives a page's headings: lower case,
// spaces to '-', punctuation dropped.
func headingSlugs(t *testing.T, path string) map[string]bool {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	slugs := map[string]bool{}
	fenced := false
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "```") {
			fenced = !fenced
		}
		if fenced || !strings.HasPrefix(line, "#") {
			continue
		}
		title := strings.TrimSpace(strings.TrimLeft(line, "#"))
		var s strings.Builder
		for _, r := range strings.ToLower(title) {
			switch {
			case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' || r == '-':
				s.WriteRune(r)
			case r == ' ':
				s.WriteRune('-')
			}
		}
		slugs[s.String()] = true
	}
	return slugs
}
