// Package counter is an example of code checked by tollgate explore
// without a change to its source: a counter that hands out unique
// tickets, written the way people write it, with sync/atomic.
package counter

import "sync/atomic"

// Tickets hands out 1, 2, 3, … to concurrent callers.
type Tickets struct {
	last atomic.Int64
	// Racy makes Next read and then store, instead of compare-and-swap:
	// two callers can get the same ticket.
	Racy bool
}

// Next returns the next ticket.
func (t *Tickets) Next() int64 {
	if t.Racy {
		n := t.last.Load() + 1
		t.last.Store(n)
		return n
	}
	for {
		old := t.last.Load()
		if t.last.CompareAndSwap(old, old+1) {
			return old + 1
		}
	}
}
