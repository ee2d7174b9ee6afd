package bench

import (
	"runtime"

	"github.com/tollgate/tollgate/impl/tokenbucket"
)

// MemoryPerKey builds design d, takes one token from each of keys distinct
// keys (so every bucket exists and then sits idle), and returns the growth
// of the live heap divided by keys, in bytes. Boxing a key for a sync.Map
// is part of that design's cost and is counted.
func MemoryPerKey(d TBDesign, keys int) float64 {
	lim := Admit.Limits(keys)
	before := liveHeap()
	inst := d.New(lim, keys)
	for k := range uint64(keys) {
		inst.TakeAt(admitNowMs, k, any(k))
	}
	after := liveHeap()
	runtime.KeepAlive(inst)
	return float64(int64(after)-int64(before)) / float64(keys)
}

// liveHeap is the heap in use after a full collection.
func liveHeap() uint64 {
	var ms runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// MemoryDesigns lists the designs whose per-key memory means something (a
// single shared limiter has none).
func MemoryDesigns() []TBDesign {
	var ds []TBDesign
	for _, d := range TBDesigns() {
		if d.Name != XRateSingle {
			ds = append(ds, d)
		}
	}
	return ds
}

// ReclaimRound is what one round of ReclaimedMemory measured: the live heap
// of a tollgate table, relative to the empty table, with Keys idle keys
// held and after the reclaim that forgot them.
type ReclaimRound struct {
	Round     int
	Keys      int   // new distinct keys taken from in this round
	Held      int64 // bytes held with the round's keys idle, before the reclaim
	Left      int64 // bytes left after the reclaim
	Reclaimed int   // buckets the reclaim forgot
}

// ReclaimedMemory measures what tokenbucket.Table.ReclaimAt gives back. Each
// of rounds rounds takes one token from keys keys never seen before, lets
// the clock run until every bucket is full again, and reclaims; the heap is
// read before and after each reclaim. Memory left after a round is the
// trie's inner nodes (cells are freed); a later round's keys reuse them, so
// what is left stays near the first round's figure instead of growing by
// Held each round.
func ReclaimedMemory(keys, rounds int) []ReclaimRound {
	lim := tokenbucket.Limits{Capacity: 10, RefillPerSecond: 10}
	base := liveHeap()
	tb := tokenbucket.New[uint64]()
	var out []ReclaimRound
	now := int64(0)
	for r := range rounds {
		for k := range uint64(keys) {
			tb.TakeAt(now, uint64(r)*uint64(keys)+k, lim, 1)
		}
		held := liveHeap()
		now += 1000 // one token back: every bucket is full again
		n, err := tb.ReclaimAt(now, lim)
		if err != nil {
			panic(err) // the limits above are valid
		}
		left := liveHeap()
		out = append(out, ReclaimRound{Round: r + 1, Keys: keys, Held: int64(held) - int64(base), Left: int64(left) - int64(base), Reclaimed: n})
	}
	runtime.KeepAlive(tb)
	return out
}
