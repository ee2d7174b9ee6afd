package interleave

import (
	"fmt"
	"strings"
	"time"
	"unsafe"
)

// Timers on the virtual clock, controlled. explore/rt makes every timer of
// the code under test (time.NewTimer, After, AfterFunc, NewTicker, Tick,
// and a context's deadline) a timer of the run, and its firing a step of
// a thread of its own, a daemon: a thread the run does not wait for
// (once every other thread is done the run ends, whatever timer is still
// pending), that is never a leak, and whose steps interleave with the
// others' like any thread's, so every strategy branches on when a timer
// fires and DFS enumerates it, within the preemption bound.
//
// A timer may fire when it is armed and no armed timer has an earlier
// deadline (timers fire in the order of their deadlines, as Go's runtime
// runs them), and either the virtual clock has reached its deadline (the
// clock thread ticked, or a thread slept, past it) or no other thread can
// run (the clock then jumps to the deadline, as a test's fake clock, or
// testing/synctest, moves time when everything waits; a ticker's, only
// while a thread of the program is unfinished: once they are all done, a
// goroutine left waiting on a ticker forever is a leak). Its firing moves
// the clock to its deadline, unless it is later already, and then: a
// channel timer sends the time on its channel of capacity 1 (a ticker
// whose last tick is still there does not fire: Go's ticker drops ticks a
// slow receiver misses), an AfterFunc starts its function as a new
// goroutine, a context's deadline cancels the context in the firing's
// step. A ticker is armed again one period on (skipping the periods the
// clock has passed).
//
// Stop and Reset are switch points on the timer (on its channel, for a
// channel timer), with Go 1.23's semantics: a value the timer sent that
// nobody has received is taken back, and counts as the timer still
// pending, so Stop returns true unless the value was received, the timer
// was stopped or its AfterFunc has started.
//
// The happens-before edges: the statement that made, reset or stopped the
// timer last before its firing; the firing before the receive that gets
// its value (the channel's edge); the firing before the first step of an
// AfterFunc's goroutine (the go statement's edge).

// timerState is one timer of the run.
type timerState struct {
	key    unsafe.Pointer // the timer (a *time.Timer, a *time.Ticker, a context)
	ch     unsafe.Pointer // its channel; nil for an AfterFunc or a deadline
	val    func() any     // what a firing sends on ch (the time)
	f      func()         // an AfterFunc's function
	inline func()         // run in the firing's step (a context's deadline)
	when   time.Duration  // the deadline, on the virtual clock (time since its start)
	period time.Duration  // a ticker's period (0: a one-shot timer)
	armed  bool
	site   string
	clock  Clock
	// rel is what the statement that made, reset or stopped the timer
	// last released; its firing acquires it.
	rel vclock
}

// Clock is the virtual clock as the timers see it: Elapsed reads it (the
// time since its start) and AdvanceTo moves it forward to d since its
// start unless it is later already. explore/rt passes its own.
// (An alias of an interface literal, so that explore/rt can name the same
// type without importing this package.)
type Clock = interface {
	Elapsed() time.Duration
	AdvanceTo(d time.Duration)
}

// word is what the timer's Stop and Reset operate on: its channel, which
// a Stop may drain, or the timer itself.
func (ts *timerState) word() unsafe.Pointer {
	if ts.ch != nil {
		return ts.ch
	}
	return ts.key
}

// full reports whether the timer's channel holds a value nobody has
// received (a ticker does not fire then).
func (c *controller) full(ts *timerState) bool {
	if ts.ch == nil {
		return false
	}
	cs := c.chans[ts.ch]
	return cs != nil && len(cs.buf) >= cs.cap
}

// TimerStart makes a timer of the run, keyed by key (a *time.Timer, a
// *time.Ticker, a context), armed to fire d from now on clock, and starts
// its daemon thread. It sends val() on ch (capacity 1) when it fires, or
// starts f as a goroutine, or runs inline in the firing's step; a period
// makes it a ticker. It returns why it cannot ("" when it did): outside
// the threads and the setup nothing would ever fire it.
func (c *controller) TimerStart(key, ch unsafe.Pointer, d, period time.Duration, val func() any, f, inline func(), clock Clock, site string) string {
	if c.direct && !c.inSetup {
		return "a timer made outside the threads (in a final check or an invariant): nothing would fire it"
	}
	if c.n+len(c.spawnQ) >= maxThreads {
		return fmt.Sprintf("more than %d threads in one run (every timer is one)", maxThreads)
	}
	ts := &timerState{key: key, ch: ch, val: val, f: f, inline: inline, period: period, armed: true, site: site, clock: clock}
	ts.when = clock.Elapsed() + max(d, 0)
	if ch != nil {
		c.state(ch, 1)
	}
	if c.timers == nil {
		c.timers = map[unsafe.Pointer]*timerState{}
	}
	c.timers[key] = ts
	c.timerList = append(c.timerList, ts)
	s := spawn{site: timerSite + site, daemon: true, f: func() {
		for {
			c.chanWait(ts.word(), "fire the timer made at "+ts.site, func() bool { return c.fireable(ts) })
			c.fire(ts)
		}
	}}
	if !c.direct && c.cur != nil {
		s.from = c.race.release(c.cur.id)
		c.rec.desc = appendDesc(c.rec.desc, fmt.Sprintf("timer T%d made, fires at +%v", c.n+len(c.spawnQ), ts.when))
	}
	c.spawnQ = append(c.spawnQ, s)
	return ""
}

// fireable reports whether timer ts may fire now (see the top).
func (c *controller) fireable(ts *timerState) bool {
	if !ts.armed || c.full(ts) {
		return false
	}
	for _, o := range c.timerList {
		if o != ts && o.armed && o.when < ts.when && !c.full(o) {
			return false
		}
	}
	if ts.when <= ts.clock.Elapsed() {
		return true
	}
	// The clock jumps only while a thread of the program is unfinished,
	// or for a one-shot timer: once the program's threads are done, a
	// goroutine that waits for a ticker forever is a leak, not a run
	// that ticks until the step cap.
	return c.noneRunnable() && (ts.period == 0 || c.programLive())
}

// programLive reports whether a thread of the program (not a goroutine
// its code started) is unfinished.
func (c *controller) programLive() bool {
	for _, w := range c.workers[:c.n] {
		if !w.spawned && w.state != finished {
			return true
		}
	}
	return false
}

// noneRunnable reports whether no thread but the daemons can run.
func (c *controller) noneRunnable() bool {
	for _, w := range c.workers[:c.n] {
		if w.daemon || w.state == finished {
			continue
		}
		if w.state == midOp && w.pendReady != nil && !w.pendReady() {
			continue
		}
		return false
	}
	return true
}

// fire is the step in which timer ts fires, on its daemon thread.
func (c *controller) fire(ts *timerState) {
	t := c.cur.id
	if ts.when > ts.clock.Elapsed() {
		ts.clock.AdvanceTo(ts.when)
	}
	c.race.acquire(t, ts.rel)
	desc := fmt.Sprintf("the timer made at %s fires at +%v", ts.site, ts.when)
	switch {
	case ts.ch != nil:
		met := false
		v := ts.val()
		c.doSend(c.chans[ts.ch], t, v, &met)
		if c.tracing {
			desc += ": sends " + c.show(v)
		}
	case ts.f != nil:
		if why := c.Go(ts.f, ts.site); why != "" {
			panic(fmt.Sprintf("explore: the AfterFunc of the timer made at %s: %s", ts.site, why))
		}
	case ts.inline != nil:
		ts.inline()
	}
	if ts.period > 0 {
		next := ts.when + ts.period
		if now := ts.clock.Elapsed(); next <= now {
			next += ((now-next)/ts.period + 1) * ts.period
		}
		ts.when = next
	} else {
		ts.armed = false
	}
	c.chanAccess(ts.word(), true, true, desc)
}

// TimerKnown reports whether key is a timer of the run.
func (c *controller) TimerKnown(key unsafe.Pointer) bool {
	_, ok := c.timers[key]
	return ok
}

// TimerStop stops the timer key for the running thread and reports
// whether it was pending (armed, or its value not yet received, which it
// takes back). Unless quiet it is a switch point on the timer; quiet, it
// is part of the current step (a context's cancel stopping its deadline).
// known is false, and nothing is done, for a timer the run did not make.
func (c *controller) TimerStop(key unsafe.Pointer, quiet bool) (known, pending bool) {
	return c.timerSet(key, quiet, false, 0, 0)
}

// TimerReset stops the timer key as TimerStop does and arms it to fire d
// from now (a ticker: every period from now, when period > 0).
func (c *controller) TimerReset(key unsafe.Pointer, d, period time.Duration) (known, pending bool) {
	return c.timerSet(key, false, true, d, period)
}

func (c *controller) timerSet(key unsafe.Pointer, quiet, arm bool, d, period time.Duration) (known, pending bool) {
	ts := c.timers[key]
	if ts == nil {
		return false, false
	}
	what := "stop"
	if arm {
		what = "reset"
	}
	what = fmt.Sprintf("%s the timer made at %s", what, ts.site)
	if !quiet {
		c.chanPause(ts.word(), what)
	}
	t := -1
	if !c.direct && c.cur != nil {
		t = c.cur.id
	}
	pending = ts.armed
	ts.armed = false
	if ts.ch != nil {
		if cs := c.chans[ts.ch]; cs != nil && len(cs.buf) > 0 {
			met := false
			c.doRecv(cs, t, &met)
			pending = true
		}
	}
	if arm {
		ts.armed = true
		ts.when = ts.clock.Elapsed() + max(d, 0)
		if period > 0 {
			ts.period = period
		}
		what += fmt.Sprintf(" to fire at +%v", ts.when)
	}
	if t >= 0 {
		ts.rel = c.race.release(t)
	}
	if !quiet {
		c.chanAccess(ts.word(), true, false, fmt.Sprintf("%s: was pending %v", what, pending))
	}
	return true, pending
}

// timerSite begins the site of a timer's thread, for traces.
const timerSite = "timer made at "

// goSiteName is how a trace's head names a goroutine's or a timer's
// thread by its site.
func goSiteName(site string) string {
	if strings.HasPrefix(site, timerSite) {
		return site
	}
	return "go " + site
}
