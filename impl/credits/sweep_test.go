package credits_test

import (
	"sync"
	"sync/atomic"
	"testing"

	"github.com/tollgate/tollgate/impl/credits"
)

// TestSweepLeavesNoExitedReservation: C17 on the table itself. A sweep
// called after a holder's reservations and its exit have returned leaves
// none of them reserved, in either class, and leaves what the holder
// enqueued; two sweeps called together split the rows between them, and
// their counts add up to every row owed.
func TestSweepLeavesNoExitedReservation(t *testing.T) {
	tab := credits.New[int]()
	a, b := credits.NewHolder(), credits.NewHolder()
	reserve(t, tab, a, credits.General)
	reserve(t, tab, b, credits.General)
	reserve(t, tab, a, credits.Internal)
	enqueue(t, tab, a, reserve(t, tab, a, credits.General), 1)
	a.Exit()
	if n := tab.Sweep(); n != 2 {
		t.Fatalf("the sweep after a's exit freed %d rows, want its 2 reserved ones", n)
	}
	if s := tab.Snapshot(); s.General.Reserved != 1 || s.Internal.Reserved != 0 || s.General.Enqueued != 1 {
		t.Fatalf("after the sweep: %+v, want only b's row reserved and a's enqueued row kept", s)
	}
	b.Exit()
	if n := tab.Sweep(); n != 1 {
		t.Fatalf("the sweep after b's exit freed %d rows, want 1", n)
	}

	for round := range 200 {
		tab := credits.New[int]()
		var owed atomic.Int64
		var holders sync.WaitGroup
		for i := range credits.Slots {
			holders.Go(func() {
				h := credits.NewHolder()
				c := credits.General
				if i >= credits.GeneralSlots {
					c = credits.Internal
				}
				tok := reserve(t, tab, h, c)
				if tok.Slot%3 == 0 { // by slot, so that slot 32 is owed in every round
					enqueue(t, tab, h, tok, i)
				} else {
					owed.Add(1)
				}
				h.Exit()
			})
		}
		holders.Wait()
		var freed atomic.Int64
		var sweeps sync.WaitGroup
		for range 3 {
			sweeps.Go(func() { freed.Add(int64(tab.Sweep())) })
		}
		sweeps.Wait()
		if s := tab.Snapshot(); freed.Load() != owed.Load() || s.General.Reserved+s.Internal.Reserved != 0 {
			t.Fatalf("round %d: three sweeps after every exit freed %d of %d rows owed, leaving %+v", round, freed.Load(), owed.Load(), s)
		}
	}
}
