package remote

import (
	"context"
	"sort"

	"github.com/git-agency/git-agency/agency/tidy"
	"github.com/git-agency/git-agency/store"
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

// gcHostArgs are the gc flags a host's gc gets: the same choices, and
// the runs of the host landed here (landed: a host never lands, so its gc
// would keep their sandboxes for ever).
func gcHostArgs(opts tidy.GCOptions, act bool, olderThan string, landed []string) []string {
	args := []string{"gc", "--older-than", olderThan}
	for _, id := range landed {
		args = append(args, "--landed-elsewhere="+id)
	}
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
	return a.runOnHost(ctx, name, run, gcHostArgs(opts, act, olderThan, a.landedOn(name))...)
}

// landedOn are the runs of host name that landed here.
func (a *Remote) landedOn(name string) []string {
	list, err := a.Store.ScanInvocations()
	if err != nil {
		return nil
	}

	var out []string
	for _, e := range list {
		if r := e.Record; r != nil && r.Host == name && store.Deref(r.LandingStatus) == store.LandingLanded {
			out = append(out, r.InvocationID)
		}
	}

	return out
}
