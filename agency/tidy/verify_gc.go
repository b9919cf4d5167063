package tidy

import (
	"context"

	"github.com/git-agency/git-agency/errs"
	"github.com/git-agency/git-agency/runner"
	"github.com/git-agency/git-agency/store"
)

// GCVerifyTree is gc's kind for a verify tree (verify/<inv>/) that no
// running land uses: one a crash left, or a failed one kept for
// inspection.
const GCVerifyTree = "verify_tree"

// verifyLeftovers are the verify directories no live land uses. A failed
// verify's tree is kept for inspection: it is listed only with failed
// (gc removes it; doctor does not call it a problem).
func (a *Tidier) verifyLeftovers(failed bool) []Leftover {
	var out []Leftover
	ids, _ := store.ReadIDDirs(a.Store.VerifiesDir())
	for _, id := range ids {
		why, kept := a.verifyDirState(id)
		if why == "" || kept != failed {
			continue
		}
		dir := a.Store.VerifyDir(id)
		out = append(out, Leftover{Kind: GCVerifyTree, Invocation: id, Path: dir, Bytes: store.DirSize(dir), Reason: why})
	}

	return out
}

// verifyDirState says why inv's verify directory may go ("" when a live
// land verifies in it), and whether it is a failed verify's kept tree.
func (a *Tidier) verifyDirState(inv string) (why string, keptFailed bool) {
	rec, err := a.Store.ReadInvocation(inv)
	switch {
	case err != nil:
		return "verify tree of an invocation without a record", false
	case rec.VerifyStatus == store.VerifyRunning && runner.AlivePtr(rec.VerifyPID, rec.VerifyPIDStartTime):
		return "", false
	case rec.VerifyStatus == store.VerifyFailed:
		return "the candidate of a failed verify, kept for inspection", true
	case rec.VerifyStatus == store.VerifyRunning:
		return "verify tree of a verify that was interrupted (its land process is gone)", false
	}

	return "verify tree no verify uses", false
}

// gcVerifyTree removes a verify directory, looking again under the lock
// that no land verifies in it now.
func (a *Tidier) gcVerifyTree(ctx context.Context, it *GCItem) error {
	if why, _ := a.verifyDirState(it.Invocation); why == "" {
		return errs.VerifyRunning(it.Invocation, 0)
	}
	if err := a.Host.RemoveVerifyTree(ctx, it.Invocation); err != nil {
		return err
	}

	a.Event(it.Invocation, "gc", map[string]any{"removed": "verify_tree"})
	return nil
}

// planVerifyTrees: kept failed verify trees (the leftovers of killed
// verifies come with planLeftovers).
func (p *gcPlanner) planVerifyTrees() {
	for _, l := range p.a.verifyLeftovers(true) {
		p.add(GCItem{Kind: l.Kind, Invocation: l.Invocation, Target: l.Path, Bytes: l.Bytes, Reason: l.Reason})
	}
	p.flush()
}
