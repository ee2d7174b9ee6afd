package counter

import (
	"sync"
	"sync/atomic"
)

// Lazy computes a value once, on first use, and hands it to every caller.
// Its fast path reads a flag without the lock, the way double-checked
// locking is written in Go: the flag is atomic, so a caller that sees it
// set sees the value stored before it. EarlyFlag stores the flag first.
type Lazy struct {
	mu        sync.Mutex
	done      atomic.Bool
	v         int
	EarlyFlag bool
}

// Get returns the value, computing it on the first call.
func (l *Lazy) Get() int {
	if l.done.Load() {
		return l.v
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.done.Load() {
		if l.EarlyFlag {
			l.done.Store(true)
			l.v = 42
		} else {
			l.v = 42
			l.done.Store(true)
		}
	}
	return l.v
}

// PlainLazy is Lazy with a plain bool for its flag, as double-checked
// locking is often written: correct on most hardware in practice, but a
// data race under the Go memory model (the fast path's read of done is
// ordered by nothing against the store under the lock), so the compiler
// owes it nothing.
type PlainLazy struct {
	mu   sync.Mutex
	done bool
	v    int
}

// Get returns the value, computing it on the first call.
func (l *PlainLazy) Get() int {
	if l.done {
		return l.v
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.done {
		l.v = 42
		l.done = true
	}
	return l.v
}
