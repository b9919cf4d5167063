package wall

import (
	"github.com/git-agency/git-agency/errs"
	"github.com/git-agency/git-agency/gitcore"
	"github.com/git-agency/git-agency/store"
)

// Decide is what walls a new invocation in under ws (agency.isolate) once
// bubblewrap was probed (check): IsolateBwrap, or IsolationNone for off
// and for auto where bubblewrap cannot make a wall (then warning says
// why, to be said once). Under bwrap, a machine without a working
// bubblewrap is refused (err).
func Decide(ws Settings, check Check) (iso string, warning, err error) {
	if ws.Mode == IsolateOff {
		return IsolationNone, nil, nil
	}
	if check.OK() {
		return IsolateBwrap, nil, nil
	}
	if ws.Mode == IsolateBwrap {
		return "", nil, errs.WallUnavailable(check.Cause, check.Detail)
	}
	return IsolationNone, errs.WallUnwalled(check.Cause, check.Detail), nil
}

// OfRecord is the wall of invocation rec under the repository's
// configuration cfg, nil when the record says it runs unwalled; self is
// the running git-agency (see For).
func OfRecord(st *store.Store, commonDir string, cfg *gitcore.Config, rec *store.InvocationRecord, self string) (*Wall, error) {
	if rec.Isolation != IsolateBwrap {
		return nil, nil
	}
	ws, err := SettingsFromConfig(cfg)
	if err != nil {
		return nil, err
	}
	return For(st, commonDir, ws, rec, self)
}
