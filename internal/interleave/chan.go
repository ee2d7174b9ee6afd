package interleave

import (
	"fmt"
	"strings"
	"unsafe"
)

// Goroutines, channels and select, controlled. Code rewritten for
// exploration (explore/rewrite) calls explore/rt for every go statement,
// channel operation and select; under the controller rt calls the methods
// below, so each runs inside the schedule:
//
//   - a go statement starts a new logical thread (spawn). Threads are
//     numbered in the order they start, after the program's own, so a
//     schedule names them the same way in every replay of its prefix. A
//     goroutine still blocked when everything else is done is a leak; one
//     that can still run runs, under the step cap. The go statement is no
//     switch point: the new thread may run from the next step on.
//   - every channel operation is a switch point on the channel's word (the
//     address of the runtime's channel) and writes it, so two operations
//     on one channel are dependent. The explorer keeps the channel's state
//     (its buffer, whether it is closed, the threads waiting to send or
//     receive) apart from the runtime's, with Go's semantics: a send
//     hands its value to a waiting receiver, else fills the buffer, else
//     waits; a receive takes from the buffer (letting a waiting sender
//     in), else from a waiting sender, else sees the channel closed, else
//     waits; close wakes every waiting receiver (with the zero value) and
//     every waiting sender (which panics); a nil channel waits forever.
//     Waiting threads are served in the order they came, as Go's runtime
//     serves them. An operation that waits takes two steps: the one that
//     finds it cannot go on and registers it, and, once another thread's
//     operation has completed it, the one that goes on.
//   - a select is the same operation over several cases. When more than
//     one case is ready, which one it takes is a choice of the schedule
//     (chooser.pick): DFS explores each, the random strategies draw one,
//     and the schedule records it after the step ("1x1s2": thread 1's
//     step took case 2), so a replay takes it again. A select waits on
//     every case at once, and whichever operation comes first completes
//     it; a select, and an operation that meets a select's waiting thread,
//     is dependent on every step of another thread (access.all).
//
// The happens-before edges (the Go memory model's, for the race detector):
// a send before the completion of the receive that gets its value; the
// close before a receive that finds the channel closed; a receive from an
// unbuffered channel before the completion of its send; the k-th receive
// from a channel of capacity C before the completion of the (k+C)-th
// send; the go statement before the goroutine's first step.

// maxThreads is the most threads a run may have (schedules name threads
// by an int8).
const maxThreads = 127

// spawn is a goroutine started in the current step (or the setup).
type spawn struct {
	f    func()
	site string
	from vclock // what the go statement released; nil in the setup
	// daemon: the thread of a timer (timer.go), which starts paused
	// before its first firing.
	daemon bool
}

// Go starts f as a new thread of the run: the go statement at site (file
// and line) of the code under test. It returns why it cannot ("" when it
// did): a go statement outside the threads and the setup (a final check,
// an invariant), or one thread too many.
func (c *controller) Go(f func(), site string) string {
	if c.direct && !c.inSetup {
		return "a go statement outside the threads (in a final check or an invariant): nothing would run it"
	}
	if c.n+len(c.spawnQ) >= maxThreads {
		return fmt.Sprintf("more than %d threads in one run", maxThreads)
	}
	s := spawn{f: f, site: site}
	if !c.direct && c.cur != nil {
		s.from = c.race.release(c.cur.id)
		c.rec.desc = appendDesc(c.rec.desc, fmt.Sprintf("go T%d", c.n+len(c.spawnQ)))
	}
	c.spawnQ = append(c.spawnQ, s)
	return ""
}

// startSpawned makes the goroutines started in the step that just ran
// threads of the run.
func (c *controller) startSpawned() {
	for _, s := range c.spawnQ {
		id := c.n
		if id == len(c.workers) {
			c.workers = append(c.workers, c.newWorker(id))
		}
		w := c.workers[id]
		w.body, w.state = s.f, atBoundary
		w.ops, w.curOp, w.curLive = 0, -1, liveNone
		w.pendReady, w.pendWhat = nil, ""
		w.pval, w.pstack, w.panicked = nil, nil, false
		w.spawned, w.started, w.goSite, w.daemon = true, false, s.site, s.daemon
		c.n++
		c.race.start(id, s.from)
		if s.daemon {
			// Run it up to its first pause, before its first firing:
			// starting is no step of its own.
			cur := c.cur
			c.cur, w.started = w, true
			w.next()
			c.cur = cur
		}
	}
	clear(c.spawnQ)
	c.spawnQ = c.spawnQ[:0]
}

// leak is the failure of a run in which every thread left is a goroutine
// the code under test started, each waiting forever (nil if a thread of
// the program is among them).
func leak(c *controller) *Failure {
	var where []string
	for i, w := range c.workers[:c.n] {
		if w.state == finished || w.daemon {
			continue
		}
		if !w.spawned {
			return nil
		}
		what := w.pendWhat
		if what == "" {
			what = fmt.Sprintf("%s %p", w.pendOp, w.pendWord)
		}
		where = append(where, fmt.Sprintf("T%d, started by the go statement at %s, waits forever to %s", i, w.goSite, what))
	}
	return &Failure{Kind: KindLeak, Thread: -1, Detail: "goroutine leak: every other thread is done, and " + strings.Join(where, "; ")}
}

// chanState is the explorer's state of one channel in one run.
type chanState struct {
	word   unsafe.Pointer
	cap    int
	buf    []chanItem
	closed bool
	// recvq and sendq are the threads waiting to receive and to send, in
	// the order they came (a select's that has gone on are skipped).
	recvq, sendq []*waiter
	// sent and recvd count the values that entered and left the buffer;
	// slots[k mod cap] is what the k-th receive released, which the
	// (k+cap)-th send acquires.
	sent, recvd int
	slots       []vclock
	closeClock  vclock
	// probe, for a channel adopted (ChanAdopt), reports an error when
	// code outside the explorer has sent on it or closed it since.
	probe func() error
}

// chanItem is a buffered value and what its send released.
type chanItem struct {
	v     any
	clock vclock
}

// waiter is one case of a waiting thread's operation (a plain send or
// receive is a select of one case).
type waiter struct {
	sel   *selState
	idx   int // the case
	send  bool
	v     any    // the value to send
	clock vclock // what the thread released when it began to wait
}

// selState is a waiting operation: once done, the case that completed
// it, the value received, and the edge the thread acquires as it goes on.
type selState struct {
	thread int
	multi  bool // a select of several cases
	done   bool
	idx    int
	v      any
	ok     bool
	closed bool // a send woken by close: it panics
	join   vclock
}

var nilChanWord, selectStmtWord byte

// state is ch's state in this run (nil for a nil channel).
func (c *controller) state(ch unsafe.Pointer, capacity int) *chanState {
	if ch == nil {
		return nil
	}
	cs := c.chans[ch]
	if cs == nil {
		cs = &chanState{word: ch, cap: capacity}
		if capacity > 0 {
			cs.slots = make([]vclock, capacity)
		}
		c.chans[ch] = cs
	}
	return cs
}

// ChanKnown reports whether the explorer keeps ch's state in this run (a
// nil channel needs none).
func (c *controller) ChanKnown(ch unsafe.Pointer) bool {
	_, ok := c.chans[ch]
	return ch == nil || ok
}

// ChanAdopt takes on a channel the run has not used yet, with what it
// holds (vals, taken out of the runtime's channel) and whether it is
// closed: a channel made before the run, or by code the rewrite did not
// reach (the standard library's: a context's Done). probe reports an
// error when code outside the explorer sends on it or closes it later,
// which the explorer cannot see: the run then has no verdict.
func (c *controller) ChanAdopt(ch unsafe.Pointer, capacity int, vals []any, closed bool, probe func() error) {
	cs := c.state(ch, capacity)
	for _, v := range vals {
		cs.buf = append(cs.buf, chanItem{v: v})
		cs.sent++
	}
	cs.closed, cs.probe = closed, probe
}

// outside is the failure of a run in which code outside the explorer
// changed a channel the run used (nil if none did): its Panic is the
// probe's error, so the run has no verdict.
func (c *controller) outside() *Failure {
	for _, cs := range c.chans {
		if cs.probe == nil {
			continue
		}
		if err := cs.probe(); err != nil {
			return &Failure{Kind: KindPanic, Thread: -1, Detail: err.Error(), Panic: err}
		}
	}
	return nil
}

// first returns the first waiter of q still waiting, dropping those whose
// select went on by another case; met is set when it passes a select's.
func first(q *[]*waiter, met *bool) *waiter {
	for len(*q) > 0 {
		w := (*q)[0]
		if w.sel.multi {
			*met = true
		}
		if !w.sel.done {
			return w
		}
		*q = (*q)[1:]
	}
	return nil
}

// can reports whether an operation on cs (a send when send) may go on
// now: a send on a closed channel goes on (to panic).
func (cs *chanState) can(send bool, met *bool) bool {
	if cs == nil {
		return false
	}
	if send {
		return cs.closed || first(&cs.recvq, met) != nil || len(cs.buf) < cs.cap
	}
	return len(cs.buf) > 0 || first(&cs.sendq, met) != nil || cs.closed
}

// chanOp is a select over the cases chans (capacities caps; sends where
// send is set, of vals), a send or a receive being a select of one case.
// With block unset it does not wait (a select with a default: -1 when no
// case is ready). It returns the case taken, the value received and
// whether it was sent (false: the channel is closed; a send then panics).
func (c *controller) chanOp(chans []unsafe.Pointer, caps []int, send []bool, vals []any, block bool, what string) (int, any, bool) {
	word := unsafe.Pointer(&selectStmtWord)
	if len(chans) == 1 {
		word = chans[0]
		if word == nil {
			word = unsafe.Pointer(&nilChanWord)
		}
	}
	c.chanPause(word, what)
	t := -1
	if !c.direct && c.cur != nil {
		t = c.cur.id
	}
	multi := len(chans) > 1
	met := multi
	states := make([]*chanState, len(chans))
	var ready []int
	for i, ch := range chans {
		states[i] = c.state(ch, caps[i])
		if states[i].can(send[i], &met) {
			ready = append(ready, i)
		}
	}
	if len(ready) > 0 {
		k := ready[0]
		if len(ready) > 1 {
			k = c.pick(ready)
		}
		cs := states[k]
		var v any
		ok := true
		if send[k] {
			ok = c.doSend(cs, t, vals[k], &met)
		} else {
			v, ok = c.doRecv(cs, t, &met)
		}
		c.chanAccess(cs.word, true, met, c.describeCase(what, multi, k, send[k], vals[k], v, ok))
		return k, v, ok
	}
	if !block {
		c.chanAccess(word, false, met, what+": no case ready, default")
		return -1, nil, false
	}
	if c.direct {
		panic(fmt.Sprintf("explore: %s must wait outside the threads (in setup or a final check): nothing else runs there, so it never could", what))
	}
	sel := &selState{thread: t, multi: multi}
	for i, cs := range states {
		if cs == nil {
			continue
		}
		w := &waiter{sel: sel, idx: i, send: send[i], v: vals[i], clock: c.race.release(t)}
		if send[i] {
			cs.sendq = append(cs.sendq, w)
		} else {
			cs.recvq = append(cs.recvq, w)
		}
	}
	c.chanAccess(word, true, met, what+": waits")
	c.chanWait(word, what, func() bool { return sel.done })
	// Another thread's operation completed this one.
	c.race.acquire(t, sel.join)
	k := sel.idx
	c.chanAccess(states[k].word, true, multi, c.describeCase(what, multi, k, send[k], vals[k], sel.v, !sel.closed && (send[k] || sel.ok)))
	if send[k] {
		return k, nil, !sel.closed
	}
	return k, sel.v, sel.ok
}

// describeCase renders what an operation did, for traces (only while
// tracing: the values are the code under test's).
func (c *controller) describeCase(what string, multi bool, k int, send bool, sent, v any, ok bool) string {
	if !c.tracing {
		return ""
	}
	if multi {
		what = fmt.Sprintf("%s: case %d", what, k)
	}
	switch {
	case send && !ok:
		return what + ": closed"
	case send:
		return what + " = " + c.show(sent)
	case !ok:
		return what + " = zero value, closed"
	}
	return what + " = " + c.show(v)
}

// show renders a value of the code under test for a trace, in direct
// mode: a String method that reaches a switch point runs through it, as
// the setup's operations do, and nothing it does is recorded.
func (c *controller) show(v any) string {
	d := c.direct
	c.direct = true
	defer func() { c.direct = d }()
	return fmt.Sprintf("%v", v)
}

// doSend sends v on cs for thread t (-1: outside the threads), which
// can(true) allowed; false when cs is closed.
func (c *controller) doSend(cs *chanState, t int, v any, met *bool) bool {
	if cs.closed {
		return false
	}
	if r := first(&cs.recvq, met); r != nil {
		cs.recvq = cs.recvq[1:]
		if cs.cap > 0 {
			// Through the buffer, which is empty: the send is the
			// sent-th, the receive the recvd-th.
			c.acquireSlot(cs, t)
			cs.sent++
			c.depositSlot(cs, r.clock)
		} else if t >= 0 {
			c.race.acquire(t, r.clock) // the receive before the send completes
		}
		var rel vclock
		if t >= 0 {
			rel = c.race.release(t)
		}
		c.complete(r, v, true, rel)
		return true
	}
	c.acquireSlot(cs, t)
	var rel vclock
	if t >= 0 {
		rel = c.race.release(t)
	}
	cs.buf = append(cs.buf, chanItem{v: v, clock: rel})
	cs.sent++
	return true
}

// doRecv receives from cs for thread t, which can(false) allowed.
func (c *controller) doRecv(cs *chanState, t int, met *bool) (any, bool) {
	if len(cs.buf) > 0 {
		it := cs.buf[0]
		cs.buf[0] = chanItem{}
		cs.buf = cs.buf[1:]
		var rel vclock
		if t >= 0 {
			c.race.acquire(t, it.clock)
			rel = c.race.release(t)
		}
		c.depositSlot(cs, rel)
		if s := first(&cs.sendq, met); s != nil {
			// A waiting sender's value takes the place freed: its send
			// completes now.
			cs.sendq = cs.sendq[1:]
			join := c.slotClock(cs)
			cs.sent++
			cs.buf = append(cs.buf, chanItem{v: s.v, clock: s.clock})
			c.complete(s, nil, true, join)
		}
		return it.v, true
	}
	if s := first(&cs.sendq, met); s != nil {
		cs.sendq = cs.sendq[1:]
		var rel vclock
		if t >= 0 {
			c.race.acquire(t, s.clock) // the send before the receive completes
			rel = c.race.release(t)
		}
		c.complete(s, nil, true, rel) // the receive before the send completes
		return s.v, true
	}
	// Closed and empty.
	if t >= 0 {
		c.race.acquire(t, cs.closeClock)
	}
	return nil, false
}

// acquireSlot orders the sent-th send after the receive that freed its
// place in the buffer (the (sent-cap)-th).
func (c *controller) acquireSlot(cs *chanState, t int) {
	if t >= 0 && cs.cap > 0 {
		c.race.acquire(t, cs.slots[cs.sent%cs.cap])
	}
}

// slotClock is a copy of what the send about to be the sent-th acquires.
func (c *controller) slotClock(cs *chanState) vclock {
	if cs.cap == 0 {
		return nil
	}
	s := cs.slots[cs.sent%cs.cap]
	return append(vclock(nil), s...)
}

// depositSlot records rel, released by the recvd-th receive, for the
// (recvd+cap)-th send, and counts the receive.
func (c *controller) depositSlot(cs *chanState, rel vclock) {
	if cs.cap > 0 && rel != nil {
		k := cs.recvd % cs.cap
		s := cs.slots[k]
		if len(s) < len(rel) {
			s = append(s, make(vclock, len(rel)-len(s))...)
		}
		s.join(rel)
		cs.slots[k] = s
	}
	cs.recvd++
}

// complete ends waiter w's operation by its case: the value received
// (ok: not by close), and join, the edge its thread acquires as it goes
// on.
func (c *controller) complete(w *waiter, v any, ok bool, join vclock) {
	s := w.sel
	s.done, s.idx, s.v, s.ok, s.join = true, w.idx, v, ok, join
}

// ChanSend sends v on the channel ch of capacity capacity for the running
// thread, waiting as Go does; false when the channel is closed (the
// caller panics as Go does).
func (c *controller) ChanSend(ch unsafe.Pointer, capacity int, v any) bool {
	_, _, ok := c.chanOp([]unsafe.Pointer{ch}, []int{capacity}, []bool{true}, []any{v}, true, fmt.Sprintf("send on chan %p", ch))
	return ok
}

// ChanRecv receives from ch: the value, and false when it came of the
// channel being closed.
func (c *controller) ChanRecv(ch unsafe.Pointer, capacity int) (any, bool) {
	_, v, ok := c.chanOp([]unsafe.Pointer{ch}, []int{capacity}, []bool{false}, []any{nil}, true, fmt.Sprintf("receive on chan %p", ch))
	return v, ok
}

// ChanClose closes ch, waking every thread waiting on it; false when it
// was closed already (the caller panics as Go does).
func (c *controller) ChanClose(ch unsafe.Pointer, capacity int) bool {
	c.chanPause(ch, fmt.Sprintf("close chan %p", ch))
	cs := c.state(ch, capacity)
	if cs.closed {
		return false
	}
	t := -1
	if !c.direct && c.cur != nil {
		t = c.cur.id
	}
	met := c.closeState(cs, t)
	c.chanAccess(ch, true, met, fmt.Sprintf("close chan %p", ch))
	return true
}

// ChanLen is the number of values in ch's buffer (len), read at a switch
// point.
func (c *controller) ChanLen(ch unsafe.Pointer, capacity int) int {
	if ch == nil {
		return 0
	}
	c.chanPause(ch, fmt.Sprintf("len of chan %p", ch))
	n := len(c.state(ch, capacity).buf)
	c.chanAccess(ch, false, false, fmt.Sprintf("len chan %p = %d", ch, n))
	return n
}

// Select runs a select statement of the running thread over its cases
// (a nil channel's case is never ready); with hasDefault it does not
// wait. It returns the case taken (-1: the default), the value received,
// and for a receive whether the value was sent, for a send whether the
// channel was open (it panics otherwise).
func (c *controller) Select(chans []unsafe.Pointer, caps []int, send []bool, vals []any, hasDefault bool, site string) (int, any, bool) {
	what := "select at " + site
	if len(chans) == 0 && !hasDefault {
		c.chanPause(unsafe.Pointer(&selectStmtWord), what)
		if c.direct {
			panic(fmt.Sprintf("explore: %s (no cases) must wait forever outside the threads", what))
		}
		c.chanWait(unsafe.Pointer(&selectStmtWord), what+" (no cases)", func() bool { return false })
		panic("unreachable")
	}
	return c.chanOp(chans, caps, send, vals, !hasDefault, what)
}

// pick asks the chooser which of the ready cases a select takes (the
// first, outside the threads or for a chooser that does not choose).
func (c *controller) pick(ready []int) int {
	if c.direct || c.ch == nil {
		return ready[0]
	}
	k := ready[0]
	if p, ok := c.ch.(picker); ok {
		k = p.pick(ready)
	}
	c.picked = k
	return k
}

// picker is a chooser that chooses among a select's ready cases.
type picker interface {
	pick(ready []int) int
}

// chanPause is the switch point before a channel operation or a select on
// word (none outside the threads).
func (c *controller) chanPause(word unsafe.Pointer, what string) {
	if c.direct {
		return
	}
	w := c.cur
	w.state, w.pendWord, w.pendReady, w.pendWhat = midOp, word, nil, what
	w.pause()
	w.pendWhat = ""
}

// chanWait pauses the running thread, not runnable until ready holds.
func (c *controller) chanWait(word unsafe.Pointer, what string, ready func() bool) {
	w := c.cur
	w.state, w.pendWord, w.pendReady, w.pendWhat = midOp, word, ready, what
	w.pause()
	w.pendReady, w.pendWhat = nil, ""
}

// chanAccess records what the step did to shared state: the channel word
// (written unless only read), and whether it is dependent on every other
// step (all).
func (c *controller) chanAccess(word unsafe.Pointer, write, all bool, desc string) {
	if c.direct {
		return
	}
	r := &c.rec
	r.acc.addr = word
	seq, ok := c.touched[word]
	if !ok {
		seq = int32(len(c.touched))
		c.touched[word] = seq
	}
	r.acc.seq = seq
	r.acc.write = write
	r.acc.all = r.acc.all || all
	r.desc = appendDesc(r.desc, desc)
}

func appendDesc(old, s string) string {
	if s == "" {
		return old
	}
	if old == "" {
		return s
	}
	return old + "; " + s
}

// choiceEntry is the schedule's entry for a select's choice of case k: a
// negative number after the step's thread.
func choiceEntry(k int) int8 { return int8(-1 - k) }
