package sync

import (
	"sync"
	"unsafe"

	"github.com/tollgate/tollgate/internal/seam/hooked"
)

// Cond is sync.Cond whose Wait, Signal and Broadcast are switch points.
// Under the explorer it keeps sync.Cond's ticket order: a Wait takes the
// next ticket, Signal wakes the oldest waiter's ticket, Broadcast every
// ticket taken so far, and a waiting thread is not runnable until its
// ticket is woken (so a lost wake-up is a reported deadlock). With no
// explorer it is a sync.Cond. L is held while observing or changing the
// condition, as for sync.Cond.
type Cond struct {
	L sync.Locker

	c *sync.Cond // with no explorer, made on first use
	// under the explorer
	taken, woken uint64 // tickets handed out, tickets woken
	pending      []uint64
}

// NewCond returns a new Cond with Locker l.
func NewCond(l sync.Locker) *Cond { return &Cond{L: l} }

func (c *Cond) real() *sync.Cond {
	if c.c == nil {
		c.c = sync.NewCond(c.L)
	}
	return c.c
}

// Wait unlocks c.L, waits to be woken by Signal or Broadcast, and locks
// c.L again before it returns.
func (c *Cond) Wait() {
	s := hooked.Current()
	if s == nil {
		c.real().Wait()
		return
	}
	w := unsafe.Pointer(c)
	s.Before(w, hooked.Add) // takes a ticket: a write of the Cond's word
	t := c.taken
	c.taken++
	c.pending = append(c.pending, t)
	s.After(hooked.Access{Word: w, Op: hooked.Add, Old: t, New: c.taken, OK: true, Site: hooked.Site(1)})
	c.L.Unlock()
	wait(s, w, hooked.Wait, func() bool { return !c.waiting(t) })
	s.After(hooked.Access{Word: w, Op: hooked.Wait, Old: t, OK: true, Site: hooked.Site(1)})
	c.L.Lock()
}

// waiting reports whether ticket t has not been woken.
func (c *Cond) waiting(t uint64) bool {
	for _, p := range c.pending {
		if p == t {
			return true
		}
	}
	return false
}

// Signal wakes the thread that has waited longest, if any.
func (c *Cond) Signal() {
	s := hooked.Current()
	if s == nil {
		c.real().Signal()
		return
	}
	w := unsafe.Pointer(c)
	s.Before(w, hooked.Store)
	n := len(c.pending)
	if n > 0 {
		c.pending = c.pending[1:]
		c.woken++
	}
	s.After(hooked.Access{Word: w, Op: hooked.Store, New: n > 0, OK: true, Site: hooked.Site(1)})
}

// Broadcast wakes every waiting thread.
func (c *Cond) Broadcast() {
	s := hooked.Current()
	if s == nil {
		c.real().Broadcast()
		return
	}
	w := unsafe.Pointer(c)
	s.Before(w, hooked.Store)
	n := len(c.pending)
	c.woken += uint64(n)
	c.pending = c.pending[:0]
	s.After(hooked.Access{Word: w, Op: hooked.Store, New: n, OK: true, Site: hooked.Site(1)})
}
