// Package docs holds the manual's topic pages, the Markdown files beside
// this one, for the programs to show: `git agency help <topic>` prints
// one, and `make install` installs each as the man page
// git-agency-<topic>(7).
package docs

import (
	"embed"
	"io/fs"
	"strings"
)

//go:embed *.md
var pages embed.FS

// developerPages are pages about the code, not about using git-agency.
var developerPages = []string{"architecture"}

// Topics are the names of the topic pages ("landing", "wall"), sorted.
func Topics() []string {
	files, _ := fs.Glob(pages, "*.md")
	var out []string
	for _, f := range files {
		name := strings.TrimSuffix(f, ".md")
		if !contains(developerPages, name) {
			out = append(out, name)
		}
	}
	return out
}

// Topic is the Markdown of topic name, and whether there is one.
func Topic(name string) (string, bool) {
	if contains(developerPages, name) || strings.ContainsAny(name, "/.") {
		return "", false
	}
	b, err := pages.ReadFile(name + ".md")
	if err != nil {
		return "", false
	}
	return string(b), true
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
