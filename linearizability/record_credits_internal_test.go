package linearizability

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/tollgate/tollgate/model"
)

// swept only rises: a sweeper that read fewer exits and finishes last
// leaves the count of the sweep that covered more (raiseTo), so a holder
// waiting for that sweep is not left waiting for one nobody will start.
func TestSweptOnlyRises(t *testing.T) {
	var v atomic.Int64
	raiseTo(&v, 6) // the sweeper that saw 6 exits finishes first
	raiseTo(&v, 5) // the one that saw 5 finishes after it
	if got := v.Load(); got != 6 {
		t.Fatalf("swept = %d after sweeps covering 6 and then 5 exits, want 6", got)
	}
}

// TestNewCrStatesDedupsAndOrders: a set of model states keeps one of each
// state, ordered by hash and among equal hashes by first appearance, and
// its hash is the states' hashes mixed in that order: checked against that
// definition for sets small enough for the scan and large enough for the
// map, with duplicates.
func TestNewCrStatesDedupsAndOrders(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for n := 0; n <= 48; n++ {
		var all []crState
		for range n {
			// distinct states differ in their unseen reservations; a few
			// values only, so that some repeat
			k := rng.IntN(max(n/2, 1))
			all = append(all, crState{unseen: []unseenRes{{holder: model.HolderID(k), mask: uint32(k % 3)}}})
		}
		var want []crState
		for _, s := range all {
			if !slices.ContainsFunc(want, s.equal) {
				want = append(want, s)
			}
		}
		slices.SortStableFunc(want, func(a, b crState) int { return cmp.Compare(a.hash(), b.hash()) })
		var wantHash uint64
		for _, s := range want {
			wantHash = mix(wantHash, s.hash())
		}
		got := newCrStates(all, nil)
		if len(got.states) != len(want) || got.hash != wantHash {
			t.Fatalf("%d states: %d kept, hash %#x; want %d, hash %#x", n, len(got.states), got.hash, len(want), wantHash)
		}
		for i := range want {
			if !got.states[i].equal(want[i]) || got.hashes[i] != want[i].hash() {
				t.Fatalf("%d states: state %d is %+v (hash %#x), want %+v", n, i, got.states[i], got.hashes[i], want[i])
			}
		}
	}
}
