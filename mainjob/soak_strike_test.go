package mainjob

import (
	"testing"

	"github.com/tollgate/tollgate/backends/faultrun"
	"github.com/tollgate/tollgate/linearizability"
)

// A soak window is injected again only when its fault found no write in
// flight and nothing else is wrong with it: a loss, a write applied twice,
// a fault that never struck or an illegal history is reported as it is.
func TestOnlyMissedWrites(t *testing.T) {
	missed := faultrun.Row{Scenario: "leader-pause+leader-partition", MustStrike: true, Struck: true, Result: linearizability.Ok}
	if !onlyMissedWrites(missed) {
		t.Errorf("%+v: a fault that found no write in flight, nothing else wrong, is not injected again", missed)
	}
	for name, r := range map[string]faultrun.Row{
		"passed":       {Scenario: "kill", MustStrike: true, Struck: true, InFlight: 2, Result: linearizability.Ok},
		"lost":         {Scenario: "kill", MustStrike: true, Struck: true, Result: linearizability.Ok, Lost: 1},
		"twice":        {Scenario: "kill", MustStrike: true, Struck: true, Result: linearizability.Ok, Extra: 1},
		"never struck": {Scenario: "kill", MustStrike: true, Result: linearizability.Ok},
		"illegal":      {Scenario: "kill", MustStrike: true, Struck: true, Result: linearizability.Illegal},
	} {
		if onlyMissedWrites(r) {
			t.Errorf("%s: %+v would be injected again, hiding %q", name, r, r.Failure())
		}
	}
}
