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
	const goroutines, perG, rounds = 4, 16, 60
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
