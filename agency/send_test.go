package agency

import (
	"testing"

	"github.com/git-agency/git-agency/store"
)

// A new turn is counted in the record and in its usage alike, without
// touching the usage another copy of the record shares: a headed run's
// usage from its last run said "1 turn" next to "turns: 2" while the
// follow-up ran.
func TestSetTurns(t *testing.T) {
	shared := &store.Usage{Turns: 1, InputTokens: 20}
	rec := store.InvocationRecord{Turns: 1, Usage: shared}
	setTurns(&rec, 2)
	if rec.Turns != 2 || rec.Usage.Turns != 2 || rec.Usage.InputTokens != 20 {
		t.Errorf("record %d turns, usage %+v", rec.Turns, *rec.Usage)
	}
	if shared.Turns != 1 {
		t.Errorf("the earlier record's usage changed: %+v", *shared)
	}
	none := store.InvocationRecord{Turns: 1}
	if setTurns(&none, 2); none.Turns != 2 || none.Usage != nil {
		t.Errorf("no usage: %+v", none)
	}
}
