package interleave

import (
	"fmt"

	"github.com/tollgate/tollgate/internal/fault"
	"github.com/tollgate/tollgate/internal/shard"
)

// DefaultSelection is the selection (Select) of the default run: every
// scenario, the catalogue, then the generated set, then the directed runs.
const DefaultSelection = "all"

// DefaultRun is the default explore run, the one definition that every
// check calling itself "the default explore run" uses: what `tollgate
// explore` runs with no flags, what the mutant matrix's explore layer
// hunts with (Hunt), and what the oracle of `tollgate mutants --patch` and
// of the automatic campaign runs (TestDefaultExplore, behind
// -explore.default). It is every scenario of DefaultSelection, in order,
// each explored exhaustively by DFS within DefaultBound preemptions, with
// no budget: nothing is cut short.
//
// When mutant is not fault.None, the scenarios of the other primitive are
// left out (they cannot see it), as `tollgate explore -mutant` leaves them
// out.
func DefaultRun(mutant fault.Fault) ([]Scenario, Options) {
	ss, err := Select(DefaultSelection, mutant, shard.Shard{})
	if err != nil {
		// Select fails only on a name it does not know or a mutant of a
		// server table; the default selection is a set.
		panic(fmt.Sprintf("explore: the default run for %s: %v", mutant, err))
	}
	return ss, Options{Strategy: DFS, Bound: DefaultBound, Fault: mutant}
}

// DefaultRunOf is DefaultRun for the real code of one primitive only:
// what a mutation of that table's code can change.
func DefaultRunOf(p Primitive) ([]Scenario, Options) {
	all, opt := DefaultRun(fault.None)
	var out []Scenario
	for _, s := range all {
		if s.Primitive == p {
			out = append(out, s)
		}
	}
	return out, opt
}
