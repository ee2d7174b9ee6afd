package fuzz_test

import (
	"fmt"

	"github.com/tollgate/tollgate/fuzz"
	"github.com/tollgate/tollgate/internal/fault"
)

// Two bytes decode to "fill the general class": 26 reservations and the
// refusal after them. The real table passes; the mutant whose general
// class reaches slot 27 is caught by C1.
func ExampleRunCreditsBytes() {
	input := []byte{1, 1} // action 1 ("fill"), class byte 1 (general)
	fmt.Println(fuzz.RunCreditsBytes(input, fault.None, fuzz.Options{}))
	f := fuzz.RunCreditsBytes(input, fault.Named("cr-class-off-by-one"), fuzz.Options{})
	fmt.Println(f.Property, "at step", f.Step, f.Op)
	// Output:
	// <nil>
	// C1 at step 27 reserve h1 general
}

// A hunt is what the mutants command runs for each (mutant, layer) pair.
func ExampleHuntRapid() {
	out := fuzz.HuntRapid(fault.Named("tb-no-clamp"), 0, 7) // budget 0: one round of rapid cases
	fmt.Println(out.Killed, out.Property)
	// Output:
	// true T6
}
