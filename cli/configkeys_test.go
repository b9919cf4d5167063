package cli

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestConfigKeysMatchConfigurationPage: the man page's settings
// (configKeys) and the table of docs/configuration.md name the same keys,
// each with the same default where both give one in the same words.
func TestConfigKeysMatchConfigurationPage(t *testing.T) {
	b, err := os.ReadFile("../docs/configuration.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := map[string]string{} // key -> default cell
	in := false
	for _, line := range strings.Split(string(b), "\n") {
		switch {
		case strings.HasPrefix(line, "| key | meaning | default |"):
			in = true
			continue
		case in && !strings.HasPrefix(line, "|"):
			in = false
		}
		if !in || strings.HasPrefix(line, "|---") {
			continue
		}
		cells := strings.Split(line, " | ")
		for _, k := range keysIn(cells[0]) {
			readme[k] = strings.Trim(cells[len(cells)-1], "| `")
		}
	}
	if len(readme) == 0 {
		t.Fatal("docs/configuration.md has no configuration table")
	}
	man := map[string]string{}
	for _, c := range configKeys {
		for _, k := range keysIn(c.Key) {
			man[k] = c.Default
		}
	}
	for k := range man {
		if _, ok := readme[k]; !ok {
			t.Errorf("%s is in cli/configkeys.go but not in docs/configuration.md's table", k)
		}
	}
	for k := range readme {
		if _, ok := man[k]; !ok {
			t.Errorf("%s is in docs/configuration.md's table but not in cli/configkeys.go", k)
		}
	}
	// Defaults written as one plain value (30s, claude, false) must agree.
	plain := regexp.MustCompile(`^[0-9a-z]+$`)
	for k, d := range man {
		if r, ok := readme[k]; ok && plain.MatchString(d) && plain.MatchString(r) && d != r {
			t.Errorf("%s: default %q in cli/configkeys.go, %q in docs/configuration.md", k, d, r)
		}
	}
}

// keysIn are the agency.* keys a cell names: "agency.runner.<name>.a, .b"
// and "`…a` / `.b`" name two.
func keysIn(cell string) []string {
	var keys []string
	last := ""
	for _, f := range regexp.MustCompile(`[A-Za-z0-9_.<>]+`).FindAllString(cell, -1) {
		switch {
		case strings.HasPrefix(f, "agency."):
			last = f
			keys = append(keys, f)
		case strings.HasPrefix(f, ".") && last != "":
			keys = append(keys, last[:strings.LastIndex(last, ".")]+f)
		}
	}
	slices.Sort(keys)
	return slices.Compact(keys)
}
