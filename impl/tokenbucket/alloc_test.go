//go:build (amd64 || arm64) && !purego

package tokenbucket_test

import (
	"testing"

	"github.com/tollgate/tollgate/impl/tokenbucket"
)

// TestTakeAllocatesNothing: an admitted take, a refused take, a peek and a
// retry-after of a key seen before allocate nothing (issue 12: the bucket
// word changes in place). Only where seam.Pair is the assembly: the boxed
// Pair of -tags purego and other GOARCHes allocates on every write.
func TestTakeAllocatesNothing(t *testing.T) {
	tab := tokenbucket.New[uint64]()
	lim := tokenbucket.Limits{Capacity: 1e9, RefillPerSecond: 1}
	tab.TakeAt(0, 7, lim, 1)
	now := int64(0)
	for name, f := range map[string]func(){
		"admitted take": func() { now++; tab.TakeAt(now, 7, lim, 1) },
		"refused take":  func() { tab.TakeAt(now, 7, lim, 1e9) },
		"peek":          func() { tab.PeekAt(now, 7, lim) },
		"retry after":   func() { tab.RetryAfterAt(now, 7, lim, 1e9) },
	} {
		if n := testing.AllocsPerRun(1000, f); n != 0 {
			t.Errorf("%s: %v allocations per call, want 0", name, n)
		}
	}
}

// TestCheckedKeysAllocateNothing: the check that refuses a key not equal to
// itself (a float, struct or interface key) adds no allocation to a take.
func TestCheckedKeysAllocateNothing(t *testing.T) {
	type pair struct {
		Name  string
		Score float64
	}
	lim := tokenbucket.Limits{Capacity: 1e9, RefillPerSecond: 1}
	floats := tokenbucket.New[float64]()
	pairs := tokenbucket.New[pair]()
	anys := tokenbucket.New[any]()
	var key any = 2.5
	floats.TakeAt(0, 2.5, lim, 1)
	pairs.TakeAt(0, pair{"a", 2.5}, lim, 1)
	anys.TakeAt(0, key, lim, 1)
	for name, f := range map[string]func(){
		"float64": func() { floats.TakeAt(0, 2.5, lim, 1) },
		"struct":  func() { pairs.TakeAt(0, pair{"a", 2.5}, lim, 1) },
		"any":     func() { anys.TakeAt(0, key, lim, 1) },
	} {
		if n := testing.AllocsPerRun(1000, f); n != 0 {
			t.Errorf("%s key: %v allocations per take, want 0", name, n)
		}
	}
}
