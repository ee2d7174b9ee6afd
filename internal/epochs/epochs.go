// Package epochs is tollgate's one renaming of credit-table epochs: the
// n-th distinct epoch seen is named n.
//
// Epochs are opaque (spec/credits.md C3 asks only that each be unique for
// the table's lifetime, spec/protocol.md §3 that a driver's be compared by
// identity), while the model numbers the epochs it issues 1, 2, … in
// order. Naming a table's or a driver's epochs in the order they are first
// seen gives exactly the model's numbers when the calls are sequential,
// and an epoch issued twice keeps its first name, so the repeat reaches the
// checkers as the C3 violation it is. internal/sut names an in-process or
// Redis table's epochs with it; the conformance harness (conform) names a
// driver's.
//
// The package imports nothing of tollgate's, so every layer may use it.
package epochs

import "sync"

// Names numbers the epochs of one table (or one driver's session) in the
// order they are first seen, starting at 1, and maps the numbers back. E is
// the epoch as its source writes it: an integer for a table, the compact
// JSON text for a driver. The zero value is ready to use and names nothing
// yet; Names is safe for concurrent use. A Names only grows: a number, once
// given, names its epoch for the Names' lifetime.
type Names[E comparable] struct {
	mu     sync.Mutex
	number map[E]uint64
	epochs []E // epochs[n-1] is the epoch named n
}

// Name returns e's number, giving e the next one if it was never seen.
func (n *Names[E]) Name(e E) uint64 {
	n.mu.Lock()
	defer n.mu.Unlock()
	if k, ok := n.number[e]; ok {
		return k
	}
	if n.number == nil {
		n.number = map[E]uint64{}
	}
	n.epochs = append(n.epochs, e)
	k := uint64(len(n.epochs))
	n.number[e] = k
	return k
}

// Seen returns e's number if e was named before; it names nothing.
func (n *Names[E]) Seen(e E) (uint64, bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	k, ok := n.number[e]
	return k, ok
}

// Epoch returns the epoch named k, if one is.
func (n *Names[E]) Epoch(k uint64) (E, bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if k == 0 || k > uint64(len(n.epochs)) {
		var zero E
		return zero, false
	}
	return n.epochs[k-1], true
}
