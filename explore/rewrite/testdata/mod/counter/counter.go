// Package counter is a fixture of the rewrite's tests: code written the
// way people write it, with a mutex, atomics, the clock and a select.
package counter

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// Counter counts, and remembers when it last counted.
type Counter struct {
	mu   sync.Mutex
	last time.Time
	n    atomic.Int64
}

// Add adds one and returns the count.
func (c *Counter) Add() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.last = time.Now()
	return c.n.Add(1)
}

// Last returns when Add last ran.
func (c *Counter) Last() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.last
}

// Ready reports whether done is closed, without waiting.
func Ready(done chan struct{}) bool {
	select { // marker: select
	case <-done:
		return true
	default:
		return false
	}
}

// Where returns the file and line of its own call of runtime.Caller.
func Where() (string, int) {
	_, file, line, _ := runtime.Caller(0) // marker: caller
	return file, line
}
