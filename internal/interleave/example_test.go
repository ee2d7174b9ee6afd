package interleave_test

import (
	"fmt"

	"github.com/tollgate/tollgate/internal/fault"
	"github.com/tollgate/tollgate/internal/interleave"
	"github.com/tollgate/tollgate/model"
)

// Two holders race for the last free internal slot, on the real table and
// on a mutant that claims a free slot with a plain store instead of a
// compare-and-swap.
func Example() {
	const h1, h2, h9 = model.HolderID(1), model.HolderID(2), model.HolderID(9)
	in := model.Internal
	s := interleave.CreditsScenario("last-slot", "two reservers, one free slot",
		[]interleave.CrStep{interleave.Reserve(h9, in), interleave.Reserve(h9, in), interleave.Reserve(h9, in),
			interleave.Reserve(h9, in), interleave.Reserve(h9, in)},
		[]interleave.CrStep{interleave.Reserve(h1, in)},
		[]interleave.CrStep{interleave.Reserve(h2, in)})

	r := interleave.Explore(s, interleave.Options{Bound: 2})
	fmt.Println("real table:", r.Summary())

	r = interleave.Explore(s, interleave.Options{Bound: 2, Fault: fault.Named("cr-reserve-no-cas")})
	f := r.Failure
	fmt.Printf("%s: %s violation (%s) with %d preemption\n", f.Mutant, f.Kind, f.Invariant, f.Preemptions)
	fmt.Println("schedule:", f.Schedule)

	rep, _ := interleave.Replay(s, fault.Named("cr-reserve-no-cas"), f.Schedule)
	fmt.Println("replayed:", rep.Failure.Kind, rep.Schedule == f.Schedule)
	// Output:
	// real table: exhaustive: 14 schedules within bound 2
	// cr-reserve-no-cas: linearizability violation (C3) with 1 preemption
	// schedule: 0x8.1x11.0x3
	// replayed: linearizability true
}
