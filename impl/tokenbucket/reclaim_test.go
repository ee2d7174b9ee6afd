package tokenbucket

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/tollgate/tollgate/model"
)

// collisionHashes are the ways the tests force the trie's hash: none, equal
// prefixes (deep push-downs) and equal full hashes (chains of cells).
var collisionHashes = map[string]func(i int) uint64{
	"distinct":        func(i int) uint64 { return uint64(i) * 0x9e3779b97f4a7c15 },
	"shared prefixes": func(i int) uint64 { return uint64(i) << 40 },
	"full collisions": func(i int) uint64 { return uint64(i % 3) },
}

// forcedTable is a table whose keys "k<i>" hash to hash(i).
func forcedTable(t *testing.T, hash func(int) uint64) *Table[string] {
	tb := New[string]()
	tb.buckets.Load().hash = func(key string) uint64 {
		var i int
		if _, err := fmt.Sscanf(key, "k%d", &i); err != nil {
			t.Errorf("hash of %q: %v", key, err)
		}
		return hash(i)
	}
	return tb
}

// liveCells counts the live cells reachable in the table's trie, all cells
// (dead ones waiting in a chain included), and the inner nodes below the
// root.
func liveCells[K comparable](tb *Table[K]) (live, all, inners int) {
	tr := tb.buckets.Load()
	var walk func(n *inner[K], d uint)
	walk = func(n *inner[K], d uint) {
		for i := range fanoutAt(d) {
			c := tr.thaw(n.kid(i).Load())
			if c != nil && cellOf(c) == nil {
				inners++
				walk(tr.asInner(c, c.first.Load()), d+1)
				continue
			}
			for x := cellOf(c); x != nil && x != tr.sealed; x = x.next.Load() {
				all++
				if !x.dead() {
					live++
				}
			}
		}
	}
	walk(tr.root, 0)
	return live, all, inners
}

// TestReclaimAgreesWithModel: T12, T10, T4, T8. Long random sequences of
// takes with stale and jumping clocks, peeks, resets, reset_alls and
// reclaims (with the keys' limits, with other limits, with old clocks), over
// every way the trie's hash can collide, answer exactly as model.TBTable.
func TestReclaimAgreesWithModel(t *testing.T) {
	lims := []model.Limits{{Capacity: 3, RefillPerSecond: 40}, {Capacity: 1.5, RefillPerSecond: 7.3}, {Capacity: 10, RefillPerSecond: 1000}}
	for name, hash := range collisionHashes {
		t.Run(name, func(t *testing.T) {
			for seed := range uint64(20) {
				r := rand.New(rand.NewPCG(seed, 7))
				tb := forcedTable(t, hash)
				var m model.TBTable[string]
				now := int64(r.IntN(1000)) - 500
				for step := range 400 {
					in := model.TBInput[string]{Key: fmt.Sprint("k", r.IntN(7)), Limits: lims[r.IntN(len(lims))], NowMs: now}
					switch x := r.IntN(20); {
					case x < 9:
						in.Kind, in.Cost = model.TBTake, min(in.Limits.Capacity, []float64{1, 0.5, 2}[r.IntN(3)])
					case x < 12:
						in.Kind = model.TBPeek
					case x < 13:
						in.Kind = model.TBReset
					case x < 14 && r.IntN(4) == 0:
						in.Kind = model.TBResetAll
					default:
						in.Kind, in.Key = model.TBReclaim, ""
					}
					switch r.IntN(6) {
					case 0:
						in.NowMs -= int64(r.IntN(300)) // a lagging reading
					case 1, 2:
						now += int64(r.IntN(400))
					}
					var want model.TBOutput
					m, want = m.Step(in)
					got := apply(tb, in)
					if !want.Equal(got) {
						t.Fatalf("seed %d step %d: %v: the model answers %s, the table %s", seed, step, in, want.Answer(in.Kind), got.Answer(in.Kind))
					}
				}
			}
		})
	}
}

// apply performs a model input on the table.
func apply(tb *Table[string], in model.TBInput[string]) model.TBOutput {
	lim := Limits(in.Limits)
	var out model.TBOutput
	var err error
	switch in.Kind {
	case model.TBTake:
		out.Remaining, out.OK, err = tb.TakeAt(in.NowMs, in.Key, lim, in.Cost)
	case model.TBPeek:
		out.Tokens, err = tb.PeekAt(in.NowMs, in.Key, lim)
		out.OK = true
	case model.TBReset:
		tb.Reset(in.Key)
		out.OK = true
	case model.TBResetAll:
		tb.ResetAll()
		out.OK = true
	case model.TBReclaim:
		out.Reclaimed, err = tb.ReclaimAt(in.NowMs, lim)
		out.OK = true
	}
	if err != nil {
		return model.TBOutput{Invalid: err.(*ArgError).Field}
	}
	return out
}

// TestReclaimFreesCells: T12. Once every bucket is full, one reclaim forgets
// them all, unlinks every cell, chains of equal hashes included, and
// compacts every inner node away; the keys then take again from full
// buckets, and a reset unlinks its cell too.
func TestReclaimFreesCells(t *testing.T) {
	lim := Limits{Capacity: 2, RefillPerSecond: 1}
	for name, hash := range collisionHashes {
		t.Run(name, func(t *testing.T) {
			tb := forcedTable(t, hash)
			const keys = 3000
			for i := range keys {
				if _, ok, _ := tb.TakeAt(0, fmt.Sprint("k", i), lim, 1); !ok {
					t.Fatalf("k%d: first take refused", i)
				}
			}
			if n, _ := tb.ReclaimAt(999, lim); n != 0 {
				t.Fatalf("reclaim at 999 ms forgot %d buckets holding 1.999 tokens", n)
			}
			live, all, inner := liveCells(tb)
			if live != keys || all != keys {
				t.Fatalf("before: %d live cells of %d, want %d", live, all, keys)
			}
			if inner == 0 && name != "full collisions" {
				t.Fatalf("before: no inner node under %d keys", keys)
			}
			if n, err := tb.ReclaimAt(1000, lim); n != keys || err != nil {
				t.Fatalf("reclaim at 1000 ms forgot %d (%v), want %d", n, err, keys)
			}
			if live, all, inner := liveCells(tb); live != 0 || all != 0 || inner != 0 {
				t.Fatalf("after: %d live cells of %d and %d inner nodes left, want none", live, all, inner)
			}
			for i := range keys {
				if rem, ok, _ := tb.TakeAt(1000, fmt.Sprint("k", i), lim, 2); !ok || rem != 0 {
					t.Fatalf("k%d after reclaim: take of 2 = %v %v, want a full bucket", i, rem, ok)
				}
			}
			for i := range keys {
				tb.Reset(fmt.Sprint("k", i))
			}
			if live, all, _ := liveCells(tb); live != 0 || all != 0 {
				t.Fatalf("after resets: %d live cells of %d left, want none", live, all)
			}
		})
	}
}

// TestReclaimBadInput: T9. Invalid limits are refused, field by field in
// order, and forget nothing.
func TestReclaimBadInput(t *testing.T) {
	tb := New[string]()
	lim := Limits{Capacity: 1, RefillPerSecond: 1}
	tb.TakeAt(0, "k", lim, 1)
	for _, c := range []struct {
		lim   Limits
		field string
	}{
		{Limits{Capacity: 0, RefillPerSecond: 1}, "capacity"},
		{Limits{Capacity: math.NaN(), RefillPerSecond: math.NaN()}, "capacity"},
		{Limits{Capacity: 1, RefillPerSecond: math.Inf(1)}, "refill_per_second"},
		{Limits{Capacity: 1, RefillPerSecond: -1}, "refill_per_second"},
	} {
		n, err := tb.ReclaimAt(1e9, c.lim)
		if ae, ok := err.(*ArgError); !ok || ae.Field != c.field || n != 0 {
			t.Errorf("ReclaimAt(%v) = %d, %v; want an ArgError naming %s", c.lim, n, err, c.field)
		}
	}
	if p, _ := tb.PeekAt(0, "k", lim); p != 0 {
		t.Fatalf("a refused reclaim changed the bucket: peek %v", p)
	}
	if live, _, _ := liveCells(tb); live != 1 {
		t.Fatalf("a refused reclaim freed a cell")
	}
}

// TestReclaimStormKeepsLiveBuckets: T12, T11, T1. On a frozen clock, eight
// goroutines take one token at a time from keys whose hashes collide in
// every way while two more reclaim without pause at that clock: a reclaim
// may kill the empty cells takes have just made, but never a bucket one has
// taken from (it is not full), so every key admits exactly its capacity. A
// reclaim that lost a live bucket would let its key admit more.
func TestReclaimStormKeepsLiveBuckets(t *testing.T) {
	lim := Limits{Capacity: 40, RefillPerSecond: 1}
	for name, hash := range collisionHashes {
		t.Run(name, func(t *testing.T) {
			for round := range 10 {
				tb := forcedTable(t, hash)
				const keys, takers = 6, 8
				var admitted [keys]int64
				var mu sync.Mutex
				var wg, reclaimers sync.WaitGroup
				stop := make(chan struct{})
				for range 2 {
					reclaimers.Go(func() {
						for {
							select {
							case <-stop:
								return
							default:
								tb.ReclaimAt(0, lim)
							}
						}
					})
				}
				for w := range takers {
					wg.Go(func() {
						var mine [keys]int64
						for j := range 60 * keys {
							k := (j + w) % keys
							if _, ok, _ := tb.TakeAt(0, fmt.Sprint("k", k), lim, 1); ok {
								mine[k]++
							}
						}
						mu.Lock()
						for k := range mine {
							admitted[k] += mine[k]
						}
						mu.Unlock()
					})
				}
				wg.Wait()
				close(stop)
				reclaimers.Wait()
				for k, n := range admitted {
					if n != int64(lim.Capacity) {
						t.Fatalf("round %d: k%d admitted %d, want %v", round, k, n, lim.Capacity)
					}
				}
			}
		})
	}
}
