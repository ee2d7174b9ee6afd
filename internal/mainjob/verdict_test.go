package mainjob

import (
	"testing"

	"github.com/tollgate/tollgate/linearizability"
)

// TestMerge: the worst verdict wins, in either order, and Ok is the
// identity — so a job's verdict does not depend on the order of its checks.
func TestMerge(t *testing.T) {
	for _, c := range []struct{ a, b, want Verdict }{
		{Ok, Ok, Ok},
		{Ok, Unknown, Unknown},
		{Unknown, Ok, Unknown},
		{Unknown, Unknown, Unknown},
		{Ok, Illegal, Illegal},
		{Illegal, Ok, Illegal},
		{Unknown, Illegal, Illegal},
		{Illegal, Unknown, Illegal},
		{Illegal, Illegal, Illegal},
	} {
		if got := c.a.Merge(c.b); got != c.want {
			t.Errorf("%v.Merge(%v) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
}

// TestVerdictOf: porcupine's Unknown stays Unknown (never a pass), and
// anything that is neither Ok nor Unknown is Illegal.
func TestVerdictOf(t *testing.T) {
	for r, want := range map[linearizability.Result]Verdict{
		linearizability.Ok: Ok, linearizability.Unknown: Unknown, linearizability.Illegal: Illegal, "": Illegal,
	} {
		if got := verdictOf(r); got != want {
			t.Errorf("verdictOf(%q) = %v, want %v", r, got, want)
		}
	}
}
