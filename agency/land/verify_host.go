package land

import (
	"context"

	"github.com/git-agency/git-agency/store"
)

// VerifyWall is how a check's command line runs in tree (verifyWall): the
// host side of agency.verify.hosts checks a caller's candidate with it.
func (a *Lander) VerifyWall(ctx context.Context, rec *store.InvocationRecord, tree string) (func(argv []string, dir string) ([]string, error), error) {
	return a.verifyWall(ctx, rec, tree)
}
