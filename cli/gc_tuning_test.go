package cli

import (
	"testing"

	"github.com/alecthomas/kong"
)

// One-shot commands get the lighter collector; the supervisor (whose
// memory is bounded) and watch keep the default.
func TestLongLived(t *testing.T) {
	for _, tc := range []struct {
		grammar any
		args    []string
		want    bool
	}{
		{&AgencyCLI{}, []string{"agent", "ls"}, false},
		{&AgencyCLI{}, []string{"worktree", "ls"}, false},
		{&AgencyCLI{}, []string{"supervise", "20260101000000-abcd"}, true},
		{&AgencyCLI{}, []string{"watch"}, true},
		{&SandboxCLI{}, []string{"ls"}, false},
		{&watchGrammar{}, nil, true},
	} {
		p, err := kong.New(tc.grammar, kong.Bind(&Env{}))
		if err != nil {
			t.Fatal(err)
		}
		kctx, err := p.Parse(tc.args)
		if err != nil {
			t.Fatalf("%v: %v", tc.args, err)
		}
		if got := longLived(kctx); got != tc.want {
			t.Errorf("longLived(%v) = %v, want %v", tc.args, got, tc.want)
		}
	}
}
