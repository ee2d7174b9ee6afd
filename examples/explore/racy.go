package counter

import "sync"

// Counter counts the calls of Inc, written the way it often is: without a
// lock. Two goroutines that call Inc at once race on n (the Go memory
// model gives a racy program no meaning; in practice an update is lost).
type Counter struct{ n int }

// Inc adds one and returns the count.
func (c *Counter) Inc() int { c.n++; return c.n }

// LockedCounter is Counter with its count under a mutex: correct.
type LockedCounter struct {
	mu sync.Mutex
	n  int
}

// Inc adds one and returns the count.
func (c *LockedCounter) Inc() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n++
	return c.n
}

// Hits counts hits per key in a sync.Map, by a Load and then a Store: two
// callers hitting one key at once can both store the same count (a lost
// update, though no access races: each operation of sync.Map is atomic).
type Hits struct{ m sync.Map }

// Hit counts a hit on key and returns its count.
func (h *Hits) Hit(key string) int {
	v, _ := h.m.Load(key)
	n, _ := v.(int)
	h.m.Store(key, n+1)
	return n + 1
}
