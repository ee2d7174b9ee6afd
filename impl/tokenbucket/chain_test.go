package tokenbucket

import (
	"fmt"
	"sync"
	"testing"
)

// TestChainAppendStorm: goroutines insert distinct keys that all share one
// hash, so every insert appends to the same chain's tail at once. Each key
// is taken once (capacity 1, no refill to speak of); afterwards a second
// take of every key must be refused. A cell lost at the tail (an append
// that overwrote another's) would make its key's second take start from a
// full bucket and succeed.
func TestChainAppendStorm(t *testing.T) {
	lim := Limits{Capacity: 1, RefillPerSecond: 1e-9}
	const goroutines, perG, rounds = 8, 8, 200
	for r := 0; r < rounds; r++ {
		tb := forcedTable(t, func(int) uint64 { return 7 })
		var wg sync.WaitGroup
		start := make(chan struct{})
		for g := 0; g < goroutines; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				for i := 0; i < perG; i++ {
					if _, ok, _ := tb.TakeAt(0, fmt.Sprintf("k%d", g*perG+i), lim, 1); !ok {
						t.Errorf("round %d: the first take of k%d was refused", r, g*perG+i)
					}
				}
			}()
		}
		close(start)
		wg.Wait()
		for k := 0; k < goroutines*perG; k++ {
			if _, ok, _ := tb.TakeAt(0, fmt.Sprintf("k%d", k), lim, 1); ok {
				t.Fatalf("round %d: a second take of k%d succeeded: its cell was lost from the chain", r, k)
			}
		}
	}
}

// TestReclaimCompactsToOneChain: two keys whose hashes share every trie
// level but the last push cells a few levels down; once a reclaim forgets
// one, every inner node on the way holds one chain at most and is
// compacted away, so the trie keeps the live key at the root and no inner
// node (the memory bound T12 promises).
func TestReclaimCompactsToOneChain(t *testing.T) {
	lim := Limits{Capacity: 2, RefillPerSecond: 1}
	for _, shift := range []int{8, 20, 40} {
		tb := forcedTable(t, func(i int) uint64 { return uint64(i) << shift })
		tb.TakeAt(0, "k1", lim, 1)
		tb.TakeAt(0, "k2", lim, 1)
		if _, _, inner := liveCells(tb); inner == 0 {
			t.Fatalf("shift %d: two keys sharing %d bits made no inner node", shift, shift)
		}
		tb.TakeAt(5000, "k2", lim, 1) // k1 is full again at 5000, k2 is not
		if n, _ := tb.ReclaimAt(5000, lim); n != 1 {
			t.Fatalf("shift %d: reclaim forgot %d buckets, want 1", shift, n)
		}
		if live, all, inner := liveCells(tb); live != 1 || all != 1 || inner != 0 {
			t.Errorf("shift %d: after the reclaim %d live cells of %d and %d inner nodes; want the one live cell and no inner node", shift, live, all, inner)
		}
		if got, _ := tb.PeekAt(5000, "k2", lim); got != 1 {
			t.Errorf("shift %d: k2 holds %v after the reclaim, want 1", shift, got)
		}
	}
}
