package runner

import (
	"context"
	"time"

	"github.com/git-agency/git-agency/checkpoint"
	"github.com/git-agency/git-agency/gitcore"
	"github.com/git-agency/git-agency/runner/stream"
	"github.com/git-agency/git-agency/store"
)

// endDisplay is the display status a finished run's notification carries,
// the one agent ls shows for it: stopped, needs input (its work was
// blocked), failed (it reported an error), or what a land needs: ready to
// land, ready to land (--apply) when its work is uncommitted, nothing to
// land.
func (s *Supervisor) endDisplay(rec *store.InvocationRecord) string {
	st, _ := stream.DeriveStatus(stream.StatusInput{
		Lifecycle: rec.Status, LandingStatus: store.Deref(rec.LandingStatus),
		ExitReason: store.Deref(rec.ExitReason), ExitCode: rec.ExitCode,
		Semantic: rec.SemanticStatus, SemanticSummary: rec.SemanticSummary,
	})
	if NeedsUser(st) {
		return "needs input"
	}
	if st != stream.StatusReadyToLand {
		return st
	}

	commits, dirty, ok := s.sandboxWork(rec)
	switch {
	case !ok:
		return st
	case dirty:
		return stream.StatusReadyToApply
	case !commits:
		return stream.StatusNothingToLand
	}

	return st
}

// sandboxWork says whether the sandbox's branch holds commits past the
// base and whether its tree holds changes land --apply would take
// (ignored and denylisted untracked files are never landed); ok is false
// when git could not tell.
func (s *Supervisor) sandboxWork(rec *store.InvocationRecord) (commits, dirty, ok bool) {
	if s.Repo == nil || rec.BaseCommit == "" {
		return false, false, false
	}

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	tip, err := s.Repo.RevParse(ctx, "refs/heads/"+rec.SandboxBranch)
	if err != nil {
		return false, false, false
	}

	commits = tip != rec.BaseCommit
	t := s.Repo.Tree(rec.SandboxPath)
	if head, err := t.Head(ctx); err == nil && head != rec.BaseCommit {
		commits = true
	}

	st, err := t.Status(ctx)
	if err != nil {
		return commits, false, false
	}

	deny := checkpoint.FullDenylist(checkpoint.DenylistFromConfig(s.Config))
	for _, e := range st {
		switch {
		case e.Kind == gitcore.StatusIgnored:
		case e.Kind == gitcore.StatusUntracked && gitcore.Denied(e.Path, deny):
		default:
			dirty = true
		}
	}

	return commits, dirty, true
}
