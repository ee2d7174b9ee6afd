package counter

import "sync"

// Lazy computes a value once, on first use, and hands it to every caller.
// Its fast path reads a flag without the lock, the way double-checked
// locking is often written; the flag is an atomic-free bool, so the code
// is correct only when the value is stored before the flag. EarlyFlag
// stores the flag first.
type Lazy struct {
	mu        sync.Mutex
	done      bool
	v         int
	EarlyFlag bool
}

// Get returns the value, computing it on the first call.
func (l *Lazy) Get() int {
	if l.done {
		return l.v
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.done {
		if l.EarlyFlag {
			l.done = true
			l.v = 42
		} else {
			l.v = 42
			l.done = true
		}
	}
	return l.v
}
