package interleave

import (
	"fmt"
	"runtime/debug"
	"strings"
	"unsafe"
)

// program is what the controller explores: a fixed number of threads, a
// fresh instance per run, and a check of each completed run. Scenarios of
// the two primitives are programs; so are the test toys.
type program interface {
	threads() int
	// begin builds a fresh instance (table, setup operations, run in direct
	// mode) and returns the script of each thread.
	begin(c *controller) (bodies []func())
	// end checks a completed run (in direct mode). With outcome set it also
	// returns the run's outcome: every thread's outputs and a summary of
	// the final state.
	end(c *controller, outcome bool) (*Failure, string)
	// tracer renders the operations and words of a replayed run (nil: the
	// default rendering, by address).
	tracer() tracer
}

// stepObserver is a program that observes the instance between steps
// (in direct mode: nothing runs while it looks) after every step whose
// write the controller's seen reported.
type stepObserver interface {
	afterStep(c *controller)
}

// invariantChecker is a program that checks the instance after every step
// (in direct mode); a non-empty answer ends the run as an invariant
// failure.
type invariantChecker interface {
	checkStep(c *controller) string
}

// chooser picks the thread of every step of one run.
type chooser interface {
	// choose returns the thread to run next, or false to abandon the run
	// (a sleep set blocked it).
	choose(v *view) (int, bool)
	// stepped reports the step that was just run.
	stepped(r *stepRec)
}

// view is what a chooser sees before a step.
type view struct {
	depth  int // steps run so far in this run
	last   int // thread of the previous step, -1 before the first
	states []tstate
	// pend is, for every thread inside an operation, the address of the
	// seam word its next step operates on, in this run.
	pend []unsafe.Pointer
}

func (v *view) lastMid() bool { return v.last >= 0 && v.states[v.last] == midOp }

// status is how a run ended.
type status uint8

const (
	complete   status = iota // every thread finished; checked
	blocked                  // abandoned by the chooser (redundant)
	stalled                  // no operation completed within the step cap
	panicked                 // the code under test panicked
	deadlocked               // every unfinished thread waits
	stopped                  // the exploration's budget ran out mid-run
	ended                    // the code under test panicked as documented (documentedPanic)
)

// panicJudge is a program whose code under test has a documented panic
// (the credit table's at its generation cap): a thread that panics so ends
// the run there, judged by the program, instead of failing it. documented
// reports whether v is such a panic of thread t, and the failure when its
// conditions do not hold.
type panicJudge interface {
	documentedPanic(c *controller, t int, v any) (f *Failure, documented bool)
}

// runResult is one executed run.
type runResult struct {
	status      status
	schedule    []int8 // thread of every step (storage reused by the next run: clone to keep)
	steps       []stepRec
	preemptions int
	failure     *Failure
	outcome     string
	// threads is the number of threads the run had: the program's and
	// the goroutines its code started; goSites, when it started any, is
	// where each thread's go statement is ("" for the program's).
	threads int
	goSites []string
}

// runOptions configure execute.
type runOptions struct {
	stepCap  int  // steps without a completed operation before a stall
	keep     bool // keep every stepRec (traces, shrinking)
	outcome  bool // compute the outcome string
	observer func(c *controller, r *stepRec)
}

// execute performs one run of p under ch.
func execute(c *controller, p program, ch chooser, opt runOptions) (res runResult) {
	if f := c.setUp(p, opt.keep); f != nil {
		res.status, res.failure = panicked, f
		return res
	}
	v := c.newView()
	res.schedule = c.sched[:0]
	c.ch = ch
	defer func() {
		if c.pairs != nil && c.pairs.keep {
			c.pairs.sched = encodeSchedule(res.schedule)
		}
		c.sched = res.schedule[:0]
		c.ch = nil
		res.threads = c.n
		if c.n > c.base {
			res.goSites = make([]string, c.n)
			for i, w := range c.workers[c.base:c.n] {
				res.goSites[c.base+i] = w.goSite
			}
		}
	}()
	idle, lastDone := 0, c.completed
	for {
		live, ready := c.refresh(&v)
		if live == 0 {
			c.abandon() // the daemons of timers still pending
			break
		}
		if ready == 0 {
			res.status, res.failure = deadlocked, deadlock(c, p)
			c.abandon()
			return res
		}
		t, ok := ch.choose(&v)
		if !ok {
			c.abandon()
			res.status = blocked
			return res
		}
		if t < 0 || t >= c.n || !runnable(v.states[t]) {
			panic(fmt.Sprintf("explore: chooser picked thread %d, which cannot run", t))
		}
		broken := c.takeStep(p, ch, t, &v, &res, opt)
		if c.workers[t].panicked || broken != "" {
			if f := c.outside(); f != nil {
				c.abandon()
				res.status, res.failure = panicked, f
				return res
			}
		}
		if c.workers[t].panicked {
			pval := c.workers[t].pval
			c.abandon()
			if j, ok := p.(panicJudge); ok {
				if f, documented := j.documentedPanic(c, t, pval); documented {
					res.status, res.failure = ended, f
					return res
				}
			}
			res.status, res.failure = panicked, panicFailure(c, p, t)
			return res
		}
		if broken != "" {
			c.abandon()
			res.status = panicked
			res.failure = &Failure{Kind: KindInvariant, Thread: -1, Detail: fmt.Sprintf("after step %d (T%d): %s", v.depth+1, t, broken)}
			return res
		}
		if c.completed != lastDone {
			lastDone, idle = c.completed, 0
		} else if idle++; opt.stepCap > 0 && idle >= opt.stepCap {
			f := stallFailure(c, p, opt.stepCap)
			if g := c.outside(); g != nil {
				f = g
			}
			c.abandon()
			res.status, res.failure = stalled, f
			return res
		}
	}
	res.status = complete
	res.failure, res.outcome = c.finish(p, opt.outcome)
	return res
}

// setUp runs p's setup directly (no switch points) and starts its
// threads, tracing them when keep; the failure, when the setup panicked
// (then no thread starts).
func (c *controller) setUp(p program, keep bool) *Failure {
	c.step, c.completed, c.tracing = 0, 0, keep
	c.objs.reset()
	c.spawnQ = c.spawnQ[:0]
	clear(c.chans)
	clear(c.timers)
	clear(c.timerList)
	c.timerList = c.timerList[:0]
	c.direct, c.inSetup = true, true
	c.bounds = nil
	var bodies []func()
	f := guard(func() { bodies = p.begin(c) })
	c.inSetup = false
	if f != nil {
		c.direct = false
		f.Detail = "setup: " + f.Detail
		return f
	}
	c.direct = false
	c.begin(bodies)
	return nil
}

// newView returns the chooser's view of a run of c's threads, on state and
// pending-word slices reused from run to run.
func (c *controller) newView() view {
	n := c.n
	if cap(c.states) < n {
		c.states = make([]tstate, n)
	}
	if cap(c.pend) < n {
		c.pend = make([]unsafe.Pointer, n)
	}
	c.states, c.pend = c.states[:n], c.pend[:n]
	return view{last: -1, states: c.states, pend: c.pend}
}

// refresh reads every thread's state into v (a thread before an operation
// that cannot proceed yet is waiting) and counts the threads not finished
// and those that can run. v grows with the goroutines the run started.
func (c *controller) refresh(v *view) (live, ready int) {
	for len(v.states) < c.n {
		v.states = append(v.states, finished)
		v.pend = append(v.pend, nil)
	}
	c.states, c.pend = v.states, v.pend
	for i, w := range c.workers[:c.n] {
		v.states[i], v.pend[i] = w.state, nil
		if w.state == midOp {
			v.pend[i] = w.pendWord
			if w.pendReady != nil && !w.pendReady() {
				v.states[i] = waiting
			}
		}
		if w.state != finished && !w.daemon {
			live++
		}
		if runnable(v.states[i]) {
			ready++
		}
	}
	return live, ready
}

// takeStep runs one step of thread t and records it: in res's schedule
// (and steps, when kept), for the observers and the chooser, and in v. It
// returns the invariant the step broke, if p checks any ("" if none).
func (c *controller) takeStep(p program, ch chooser, t int, v *view, res *runResult, opt runOptions) string {
	pre := v.last >= 0 && t != v.last && v.states[v.last] == midOp
	c.run(t)
	if obs, ok := p.(stepObserver); ok && c.rec.acc.seen {
		obs.afterStep(c)
	}
	var broken string
	if inv, ok := p.(invariantChecker); ok && !c.workers[t].panicked {
		broken = inv.checkStep(c)
	}
	c.step++
	c.rec.preempt = pre
	if pre {
		res.preemptions++
	}
	res.schedule = append(res.schedule, int8(t))
	if c.picked >= 0 {
		res.schedule = append(res.schedule, choiceEntry(c.picked))
		c.picked = -1
	}
	if opt.keep {
		res.steps = append(res.steps, c.rec)
	}
	if opt.observer != nil {
		opt.observer(c, &c.rec)
	}
	ch.stepped(&c.rec)
	v.depth++
	v.last = t
	return broken
}

// panicFailure is the failure of a run whose thread t panicked, or of the
// data race found before it, which is the cause to report.
func panicFailure(c *controller, p program, t int) *Failure {
	w := c.workers[t]
	f := &Failure{Kind: KindPanic, Thread: t,
		Detail: fmt.Sprintf("thread %d panicked: %v", t, w.pval), Stack: string(w.pstack), Panic: w.pval}
	if r := c.race.found; r != nil {
		// The panic may be the race's consequence: the race is the
		// cause to report.
		rf := raceFailure(r, p.tracer())
		rf.Detail += fmt.Sprintf("; then thread %d panicked: %v", t, w.pval)
		rf.Stack, rf.Panic = f.Stack, f.Panic
		return rf
	}
	return f
}

// stallFailure is the failure of a run in which no operation completed in
// stepCap steps (lock-freedom), naming where each thread stands.
func stallFailure(c *controller, p program, stepCap int) *Failure {
	var where []string
	for i, w := range c.workers[:c.n] {
		if w.state == midOp {
			if w.pendWhat != "" {
				where = append(where, fmt.Sprintf("T%d before %s", i, w.pendWhat))
				continue
			}
			name := fmt.Sprintf("%p", w.pendWord)
			if tr := p.tracer(); tr != nil {
				name = tr.word(w.pendWord)
			}
			where = append(where, fmt.Sprintf("T%d before %s %s", i, w.pendOp, name))
		}
	}
	return &Failure{Kind: KindProgress, Thread: -1, Detail: fmt.Sprintf(
		"no operation completed in %d steps while threads kept stepping (lock-freedom): %s", stepCap, strings.Join(where, ", "))}
}

// finish runs p's final check directly on a complete run, returning its
// failure and outcome; a data race found in the run is the verdict instead.
func (c *controller) finish(p program, outcome bool) (*Failure, string) {
	c.direct = true
	var fail *Failure
	var out string
	if f := guard(func() { fail, out = p.end(c, outcome) }); f != nil {
		f.Detail = "final check: " + f.Detail
		fail = f
	}
	c.direct = false
	if r := c.race.found; r != nil {
		// A racy program has no defined behaviour to check: the race is
		// the verdict, whatever the oracle said of the run.
		fail = raceFailure(r, p.tracer())
	}
	if f := c.outside(); f != nil {
		// A channel changed where the explorer could not see it: the
		// run's outcome says nothing.
		fail = f
	}
	return fail, out
}

// deadlock is the failure of a run in which every unfinished thread waits
// before a blocking operation. When only goroutines the code under test
// started are left, each blocked forever, it is a leak instead: the
// program's threads are done, and what they started never ends.
func deadlock(c *controller, p program) *Failure {
	if f := c.outside(); f != nil {
		return f
	}
	if r := c.race.found; r != nil {
		// The threads may wait because of the race (a value read too
		// early): the race is the cause to report.
		return raceFailure(r, p.tracer())
	}
	if f := leak(c); f != nil {
		return f
	}
	var where []string
	for i, w := range c.workers[:c.n] {
		if w.state == finished || w.daemon {
			continue
		}
		if w.pendWhat != "" {
			where = append(where, fmt.Sprintf("T%d waits to %s", i, w.pendWhat))
			continue
		}
		name := fmt.Sprintf("%p", w.pendWord)
		if tr := p.tracer(); tr != nil {
			name = tr.word(w.pendWord)
		}
		where = append(where, fmt.Sprintf("T%d waits to %s %s", i, w.pendOp, name))
	}
	return &Failure{Kind: KindDeadlock, Thread: -1, Detail: "deadlock: every thread waits: " + strings.Join(where, ", ")}
}

// guard runs f and turns a panic into a panic failure.
func guard(f func()) (fail *Failure) {
	defer func() {
		if r := recover(); r != nil {
			fail = &Failure{Kind: KindPanic, Thread: -1, Detail: fmt.Sprint(r), Stack: string(debug.Stack()), Panic: r}
		}
	}()
	f()
	return nil
}
