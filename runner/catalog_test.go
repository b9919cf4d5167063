package runner

import (
	"reflect"
	"strings"
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
		if got := spec.Argv(true, args, "-fix it", sb); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: Argv = %q, want %q", tt.runner, got, tt.want)
		}
	}
	spec, _ := Lookup(cfg, "claude")
	if got, want := spec.Argv(false, nil, "hi", sb), []string{"claude", "--", "hi"}; !reflect.DeepEqual(got, want) {
		t.Errorf("headed Argv = %q, want %q", got, want)
	}
	if got, want := spec.Argv(true, nil, "", sb), []string{"claude", "-p", "--output-format", "stream-json", "--verbose"}; !reflect.DeepEqual(got, want) {
		t.Errorf("no prompt: Argv = %q, want %q", got, want)
	}
}

// sb is the sandbox the argument tests name.
var sb = Paths{Sandbox: "/sb", GitDir: "/repo/.git/worktrees/tree", CommonDir: "/repo/.git"}

// Runner arguments name the sandbox, its git directory and the common
// directory, so a runner that starts a container can mount what git needs.
func TestArgvPlaceholders(t *testing.T) {
	cfg := gitcore.NewConfig([]gitcore.ConfigEntry{
		{Key: "agency.runner.box.command", Value: "docker"},
		{Key: "agency.runner.box.arg", Value: "-v"},
		{Key: "agency.runner.box.arg", Value: "{sandbox}:{sandbox}"},
		{Key: "agency.runner.box.arg", Value: "--mount=type=bind,src={gitdir},dst={gitdir}"},
		{Key: "agency.runner.box.arg", Value: "{commondir}/objects"},
	})
	spec, err := Lookup(cfg, "box")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"docker", "-v", "/sb:/sb", "--mount=type=bind,src=/repo/.git/worktrees/tree,dst=/repo/.git/worktrees/tree", "/repo/.git/objects", "{sandbox} stays"}
	if got := spec.Argv(true, nil, "{sandbox} stays", sb); !reflect.DeepEqual(got, want) {
		t.Errorf("Argv = %q, want %q", got, want)
	}
}

// Inside the wall the built-ins work alone when headless (and headed when
// configured), unless told not to or the user picked a permission flag;
// outside it nothing is added.
func TestWalledUnattended(t *testing.T) {
	claudeAlone := []string{"claude", "-p", "--output-format", "stream-json", "--verbose", "--permission-mode", "bypassPermissions", "--", "go"}
	codexAlone := []string{"codex", "exec", "-C", "/sb", "--json", "--dangerously-bypass-approvals-and-sandbox", "--", "go"}
	for _, tt := range []struct {
		name     string
		cfg      []gitcore.ConfigEntry
		runner   string
		walled   bool
		headless bool
		args     []string
		want     []string
	}{
		{"claude headless walled", nil, "claude", true, true, nil, claudeAlone},
		{"codex headless walled", nil, "codex", true, true, nil, codexAlone},
		{"claude unwalled", nil, "claude", false, true, nil, []string{"claude", "-p", "--output-format", "stream-json", "--verbose", "--", "go"}},
		{"codex unwalled", nil, "codex", false, true, nil, []string{"codex", "exec", "-C", "/sb", "--json", "--", "go"}},
		{"claude headed asks", nil, "claude", true, false, nil, []string{"claude", "--", "go"}},
		{"codex headed asks, without its own sandbox", nil, "codex", true, false, nil, []string{"codex", "--sandbox", "danger-full-access", "--", "go"}},
		{"codex headed unwalled", nil, "codex", false, false, nil, []string{"codex", "--", "go"}},
		{"codex headed, the user's approval policy", nil, "codex", true, false, []string{"-a", "untrusted"}, []string{"codex", "--sandbox", "danger-full-access", "-a", "untrusted", "--", "go"}},
		{"codex headed, the user's sandbox", nil, "codex", true, false, []string{"-s", "read-only"}, []string{"codex", "-s", "read-only", "--", "go"}},
		{"codex headed turned off", []gitcore.ConfigEntry{{Key: "agency.runner.codex.unattended", Value: "false"}}, "codex", true, false, nil, []string{"codex", "--", "go"}},
		{"claude headed configured", []gitcore.ConfigEntry{{Key: "agency.runner.claude.unattended", Value: "true"}}, "claude", true, false, nil,
			[]string{"claude", "--permission-mode", "bypassPermissions", "--", "go"}},
		{"codex headed configured", []gitcore.ConfigEntry{{Key: "agency.runner.codex.unattended", Value: "yes"}}, "codex", true, false, nil,
			[]string{"codex", "--dangerously-bypass-approvals-and-sandbox", "--", "go"}},
		{"configured but unwalled", []gitcore.ConfigEntry{{Key: "agency.runner.claude.unattended", Value: "true"}}, "claude", false, false, nil, []string{"claude", "--", "go"}},
		{"turned off", []gitcore.ConfigEntry{{Key: "agency.runner.codex.unattended", Value: "false"}}, "codex", true, true, nil, []string{"codex", "exec", "-C", "/sb", "--json", "--", "go"}},
		{"user's permission mode", nil, "claude", true, true, []string{"--permission-mode=default"},
			[]string{"claude", "-p", "--output-format", "stream-json", "--verbose", "--permission-mode=default", "--", "go"}},
		{"configured sandbox", []gitcore.ConfigEntry{{Key: "agency.runner.codex.headlessArg", Value: "-s"}, {Key: "agency.runner.codex.headlessArg", Value: "read-only"}}, "codex", true, true, nil,
			[]string{"codex", "exec", "-C", "/sb", "--json", "-s", "read-only", "--", "go"}},
		{"custom runner", []gitcore.ConfigEntry{{Key: "agency.runner.mine.command", Value: "mine"}}, "mine", true, true, nil, []string{"mine", "go"}},
	} {
		spec, err := Lookup(gitcore.NewConfig(tt.cfg), tt.runner)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		spec = spec.Walled(tt.walled, tt.headless, tt.args)
		if got := spec.Argv(tt.headless, tt.args, "go", sb); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: Argv = %q, want %q", tt.name, got, tt.want)
		}
	}
	_, err := Lookup(gitcore.NewConfig([]gitcore.ConfigEntry{{Key: "agency.runner.claude.unattended", Value: "maybe"}}), "claude")
	if err == nil || !strings.Contains(err.Error(), "agency.runner.claude.unattended") {
		t.Errorf("a bad unattended value: %v", err)
	}
}
