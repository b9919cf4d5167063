package runner

import (
	"reflect"
	"testing"

	"github.com/git-agency/git-agency/gitcore"
)

// The built-ins put "--" before the prompt, so a runner argument that takes
// a value cannot swallow it; custom runners get the prompt as it is.
func TestArgvEndOfOptions(t *testing.T) {
	cfg := gitcore.NewConfig([]gitcore.ConfigEntry{
		{Key: "agency.runner.mine.command", Value: "mine"},
	})
	args := []string{"--allowedTools", "Bash"}
	for _, tt := range []struct {
		runner string
		want   []string
	}{
		{"claude", []string{"claude", "-p", "--output-format", "stream-json", "--verbose", "--allowedTools", "Bash", "--", "-fix it"}},
		{"codex", []string{"codex", "exec", "-C", "/sb", "--json", "--allowedTools", "Bash", "--", "-fix it"}},
		{"mine", []string{"mine", "--allowedTools", "Bash", "-fix it"}},
	} {
		spec, err := Lookup(cfg, tt.runner)
		if err != nil {
			t.Fatal(err)
		}
		if got := spec.Argv(true, args, "-fix it", "/sb"); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: Argv = %q, want %q", tt.runner, got, tt.want)
		}
	}
	spec, _ := Lookup(cfg, "claude")
	if got, want := spec.Argv(false, nil, "hi", "/sb"), []string{"claude", "--", "hi"}; !reflect.DeepEqual(got, want) {
		t.Errorf("headed Argv = %q, want %q", got, want)
	}
	if got, want := spec.Argv(true, nil, "", "/sb"), []string{"claude", "-p", "--output-format", "stream-json", "--verbose"}; !reflect.DeepEqual(got, want) {
		t.Errorf("no prompt: Argv = %q, want %q", got, want)
	}
}
