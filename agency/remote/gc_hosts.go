package remote

import (
	"context"
	"sort"

	"github.com/git-agency/git-agency/agency/tidy"
)

// RecordHosts are the hosts this repository's records name, sorted: where
// `gc` runs too.
func (a *Remote) RecordHosts() []string {
	seen := map[string]bool{}
	list, err := a.Store.ScanInvocations()
	if err != nil {
		return nil
	}

	for _, e := range list {
		if e.Record != nil && e.Record.Host != "" {
			seen[e.Record.Host] = true
		}
	}

	out := make([]string, 0, len(seen))
	for h := range seen {
		out = append(out, h)
	}

	sort.Strings(out)
	return out
}

// gcHostArgs are the gc flags a host's gc gets: the same choices.
func gcHostArgs(opts tidy.GCOptions, act bool, olderThan string) []string {
	args := []string{"gc", "--older-than", olderThan}
	if act {
		args = append(args, "--yes")
	} else {
		args = append(args, "--dry-run")
	}

	if opts.IncludePending {
		args = append(args, "--include-pending")
	}

	if opts.Force {
		args = append(args, "--force")
	}

	return args
}

// GCOnHost runs gc in the host's mirror of this repository, with the same
// choices (act: remove, else a dry run), its output to run's writers. It
// returns the host's gc's exit status.
func (a *Remote) GCOnHost(ctx context.Context, name string, opts tidy.GCOptions, act bool, olderThan string, run HostRun) (int, error) {
	return a.RunOnHost(ctx, name, run, gcHostArgs(opts, act, olderThan)...)
}
