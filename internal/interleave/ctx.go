package interleave

import "unsafe"

// The operations explore/rt's twins of the context package are made of
// (explore/rt's context.go says what each context operation is). A
// context's cancel, its Err and its Cause are switch points on the
// context; a cancel closes the Done channels of the context and of every
// context below it, starts their AfterFuncs as goroutines and stops their
// deadlines, in one step, which is dependent on every step of another
// thread (it touches several channels, as a select reads several).
//
// The happens-before edges: a cancel (its CancelFunc, or the firing of its
// deadline) before a receive that finds Done closed, and before an Err or
// a Cause that returns what it set; a cancel before the first step of the
// AfterFunc it starts; the statement that made a context with a deadline
// before the deadline's firing (timer.go).

// Step is the switch point before an operation of the running thread on
// word (none outside the threads), saying what it is for reports.
func (c *controller) Step(word unsafe.Pointer, what string) { c.chanPause(word, what) }

// Did records what the step's operation did: word, written unless only
// read, and whether it is dependent on every step of another thread.
func (c *controller) Did(word unsafe.Pointer, write, all bool, desc string) {
	c.chanAccess(word, write, all, desc)
}

// Release is what the running thread's operation publishes (nil outside
// the threads), for Acquire.
func (c *controller) Release() any {
	if c.direct || c.cur == nil {
		return nil
	}
	return c.race.release(c.cur.id)
}

// Acquire orders the running thread after what a Release returned.
func (c *controller) Acquire(v any) {
	if c.direct || c.cur == nil || v == nil {
		return
	}
	c.race.acquire(c.cur.id, v.(vclock))
}

// CloseNow closes the channel ch of the run (of capacity capacity) in the
// current step, with no switch point of its own, waking every thread
// waiting on it; false when it was closed already.
func (c *controller) CloseNow(ch unsafe.Pointer, capacity int) bool {
	cs := c.state(ch, capacity)
	if cs == nil {
		panic("explore: CloseNow of a nil channel")
	}
	if cs.closed {
		return false
	}
	t := -1
	if !c.direct && c.cur != nil {
		t = c.cur.id
	}
	c.closeState(cs, t)
	return true
}

// closeState closes cs for thread t (-1: outside the threads) and wakes
// its waiters; met is set when one was a select's.
func (c *controller) closeState(cs *chanState, t int) (met bool) {
	cs.closed = true
	if t >= 0 {
		cs.closeClock = c.race.release(t)
	}
	for r := first(&cs.recvq, &met); r != nil; r = first(&cs.recvq, &met) {
		cs.recvq = cs.recvq[1:]
		c.complete(r, nil, false, cs.closeClock)
	}
	for s := first(&cs.sendq, &met); s != nil; s = first(&cs.sendq, &met) {
		cs.sendq = cs.sendq[1:]
		c.complete(s, nil, false, nil)
		s.sel.closed = true
	}
	return met
}
