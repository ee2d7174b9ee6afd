package model

import (
	"math/rand/v2"
	"testing"
)

// TestReclaimStepsAreStep: a reclaim's floor step followed by its step of
// every key, in any order, is Step's reclaim (T11, T12): the same table,
// and a count equal to the steps that forgot.
func TestReclaimStepsAreStep(t *testing.T) {
	lim := Limits{Capacity: 2, RefillPerSecond: 1000}
	keys := []string{"a", "b", "c", "d"}
	rng := rand.New(rand.NewPCG(1, 2))
	for round := 0; round < 500; round++ {
		var tb TBTable[string]
		for i := rng.IntN(8); i > 0; i-- {
			in := TBInput[string]{Kind: TBTake, Key: keys[rng.IntN(len(keys))], Limits: lim, Cost: float64(1 + rng.IntN(2)), NowMs: int64(rng.IntN(4))}
			if rng.IntN(5) == 0 {
				in = TBInput[string]{Kind: TBReclaim, Limits: lim, NowMs: int64(rng.IntN(4))}
			}
			tb, _ = tb.Step(in)
		}
		now := int64(rng.IntN(5))
		want, out := tb.Step(TBInput[string]{Kind: TBReclaim, Limits: lim, NowMs: now})
		got := tb.ReclaimFloor(now)
		forgot := 0
		for _, i := range rng.Perm(len(keys)) {
			var f bool
			if got, f = got.ReclaimKey(keys[i], lim, now); f {
				forgot++
			}
		}
		if !got.Equal(want) || forgot != out.Reclaimed {
			t.Fatalf("round %d: the steps leave %d buckets and forgot %d; Step leaves %d and counts %d", round, got.Len(), forgot, want.Len(), out.Reclaimed)
		}
	}
}
