package interleave

import (
	"fmt"
	"iter"
	"runtime/debug"
	"unsafe"

	"github.com/tollgate/tollgate/internal/seam/hooked"
)

// The controller runs the logical threads of one run one at a time, each on
// its own coroutine (iter.Pull). The scheduler it installs with
// hooked.Install is the controller itself: Before records the calling
// thread's pending seam operation and yields its coroutine, so control comes
// back to the controller, which picks the thread that runs the next step.
//
// A step is what a thread does between two pauses: the seam operation it
// was paused before (or, at an operation boundary, the call of its next
// model operation), then its local code up to the next seam operation, the
// next boundary or the end of its script. So every seam operation is a
// switch point, and so is every boundary between two model operations.
//
// Coroutines, not goroutines with channels: BenchmarkSwitch measures a
// switch through iter.Pull at 35–41 ns and a handoff over a pair of
// unbuffered channels at 160–320 ns on this machine (2 cores, Go 1.26; the
// higher figures with other jobs running), and a coroutine switch never
// goes through the scheduler, so a CPU hog on the other core does not slow
// it down. The coroutines are pooled: one per
// thread index for a whole exploration, each running one run's script after
// another, so a run costs no goroutine creation (about 1 µs each).

// tstate is where a thread is between two steps.
type tstate uint8

const (
	// atBoundary: not started, or between two model operations. Switching
	// away from it is free.
	atBoundary tstate = iota
	// midOp: inside a model operation with its next seam operation pending.
	// Switching away from it while it could continue is a preemption.
	midOp
	// finished: its script is done (or it was unwound).
	finished
	// waiting: inside an operation, paused before a blocking operation (a
	// Lock of a held mutex, a Wait on a WaitGroup not at zero) that may not
	// run now. It is a state of the view only (the worker stays midOp): a
	// chooser may not pick it, and switching away from it is no preemption.
	waiting
)

// runnable reports whether a thread in state st may take the next step.
func runnable(st tstate) bool { return st == atBoundary || st == midOp }

// Sentinels, panicked inside a coroutine and recovered at its top.
type sentinel struct{ why string }

var (
	// errAbandon unwinds a run that the controller gave up (the search
	// stopped early, a sleep set blocked it, a failure ended it).
	errAbandon = &sentinel{"run abandoned"}
	// errStopped unwinds a coroutine whose yield returned false: the pool
	// was stopped.
	errStopped = &sentinel{"coroutine stopped"}
)

// Liveness conflicts. A holder's liveness flag lives in impl/credits (the
// explored copies share its Holder type), so it is not a seam word; the
// controller still orders an exit before or after every sweep step (see
// spec/explore.md).
const (
	liveNone  int8 = 0
	liveRead  int8 = 1
	liveWrite int8 = 2
)

// access is what one step did to shared state, as the reduction compares
// it: at most one seam word, by its address in this run, whether it wrote
// it, whether the step stamped a call or a return into the history, and
// its holder-liveness effect.
//
// Words are identified by address, never by name: two steps touch the same
// memory exactly when their addresses are equal, so the dependence below is
// exact by construction, for words the explorer can name and for words it
// cannot (a heap box's flag, a frozen trie wrapper's own word, a node not
// yet published). Addresses differ from run to run (every run has a fresh
// table), so an access recorded in one run is compared only with accesses
// of the same run; a sleeping thread's step, recorded in a sibling run, is
// compared through the word its thread is paused before in the current run
// (see dfs.choose). Names are for traces only.
type access struct {
	addr  unsafe.Pointer // nil: no seam operation (a step at a boundary)
	write bool
	// seq is the word's place in the order of first touches of this run:
	// the same for the same word in every replay of one schedule prefix, so
	// it lets the search check that a replay is deterministic; it plays no
	// part in dependence.
	seq int32
	// plain: the step begins with a plain store (hooked.PlainStore). Plain
	// loads are no switch points, so any step of another thread may read
	// what it writes: it is dependent on every one of them.
	plain     bool
	call, ret bool
	live      int8
	// seen: the write changes what the step observer records (a slot's
	// state, the closed flag), so it is ordered against every other such
	// write (see crProgram.afterStep).
	seen bool
	// all: the step is dependent on every step of another thread: a
	// select, which reads or waits on several channels, or a channel
	// operation that met a thread waiting in one (chan.go).
	all bool
}

// same reports whether a and b are the same step as far as a replay can
// tell: equal but for the address, which changes with every run.
func (a access) same(b access) bool {
	a.addr, b.addr = nil, nil
	return a == b
}

// dependent reports whether two steps of different threads do not commute:
// either is a plain store, they touch the same word and one writes, one
// stamps a call and the other a return, both change what the step observer
// sees, or one exits a holder while the other sweeps. Both accesses must be
// of one run.
func dependent(a, b access) bool {
	if a.plain || b.plain || a.all || b.all {
		return true
	}
	if a.addr != nil && a.addr == b.addr && (a.write || b.write) {
		return true
	}
	if (a.call && b.ret) || (a.ret && b.call) || (a.seen && b.seen) {
		return true
	}
	return a.live != liveNone && b.live != liveNone && (a.live == liveWrite || b.live == liveWrite)
}

// stepRec is one executed step.
type stepRec struct {
	thread int
	acc    access
	raw    hooked.Access // the seam operation, when acc.addr != nil
	hasRaw bool
	// vals are the operation's values as the tracer rendered them when it
	// ran (traces only; rendered is false when nothing rendered them).
	vals      [2]string
	rendered  bool
	midAfter  bool   // the thread is inside an operation after the step
	doneAfter bool   // the thread finished with this step
	op        int    // index of the model operation the step ran in (-1: none)
	preempt   bool   // running this step preempted the previous thread
	note      string // what the step observer saw after it (traces only)
	// desc describes a channel operation, a select or a go statement the
	// step made (traces only; chan.go).
	desc string
}

// worker is one pooled coroutine.
type worker struct {
	c     *controller
	id    int
	next  func() (struct{}, bool)
	stop  func()
	yield func(struct{}) bool
	body  func()
	state tstate
	// pending is the seam operation the thread is paused before (midOp).
	pendWord unsafe.Pointer
	pendOp   hooked.Op
	// pendReady, for a blocking operation, reports whether it may run.
	pendReady func() bool
	// stopping: yield returned false (the pool is being stopped); the
	// coroutine may not yield again while it unwinds.
	stopping bool
	// per run
	ops      int  // model operations started
	curOp    int  // index of the operation in progress (-1 none)
	curLive  int8 // liveness effect of every step of the current operation
	pval     any  // a panic of the code under test
	pstack   []byte
	panicked bool
	// spawned: the thread was started by a go statement of the code under
	// test (chan.go), at goSite; started: it has taken a step.
	spawned, started bool
	goSite           string
	// daemon: the thread fires a timer (timer.go); the run does not wait
	// for it, and it is never a leak.
	daemon bool
	// pendWhat says what a thread paused before a channel operation or a
	// select waits for (deadlock and leak reports); "" for seam operations.
	pendWhat string
}

// controller is the installed hooked.Scheduler and the pool of coroutines.
type controller struct {
	// bounds are the named bounds the current program lowers (Bound).
	bounds  map[string]uint64
	workers []*worker
	cur     *worker
	// direct runs the code under test without switching (setup, final
	// observations); no step is recorded. inSetup: direct, in the setup.
	direct, inSetup bool
	abandoning      bool
	rec             stepRec
	// touched numbers the words of the current run in the order they are
	// first touched (access.seq).
	touched  map[unsafe.Pointer]int32
	onAccess func(hooked.Access)
	// render, while tracing, renders the values of a seam operation when it
	// runs, so a trace shows what each word held at its step.
	render func(hooked.Access) (old, new string)
	// seen reports whether a write changes what the program observes
	// between steps (nil: nothing is observed).
	seen func(hooked.Access) bool
	// step is the history time of the step being run: setup operations
	// take one each, then every step of the threads one.
	step int
	// completed counts the model operations that returned (progress).
	completed int
	// tracing: the run is replayed for a trace (observers add notes).
	tracing   bool
	uninstall func()
	// race is the data-race detector of the current run.
	race *racer
	// objs is what the run's explored code allocated (bounds.go).
	objs objects
	// noRaces, inlinePlain: Options.NoRaces and InlinePlainStores.
	noRaces, inlinePlain bool
	// pairs, when Options.SitePairs is set, notes which thread handed
	// each word to which (interleaving coverage, sitepairs.go).
	pairs *pairTracker
	// base is the number of the program's own threads; n the number of
	// threads of the current run, base plus the goroutines it started
	// (spawned in order, so a schedule names them by their place in it).
	base, n int
	// spawnQ holds the goroutines started during the current step (or the
	// setup), made threads once it ends.
	spawnQ []spawn
	// chans is the explorer's state of every channel the run used
	// (chan.go), by the address of the runtime's channel.
	chans map[unsafe.Pointer]*chanState
	// timers is every timer the run made (timer.go), by its key, and
	// timerList the same in the order they were made.
	timers    map[unsafe.Pointer]*timerState
	timerList []*timerState
	// ch is the current run's chooser: a select with several ready cases
	// asks it which to take (pick).
	ch chooser
	// picked is the case a select took in the current step when it had a
	// choice (-1: none), for the schedule.
	picked int
	// watch tells the watchdog (watchdog.go) of every step; unwatch
	// leaves it.
	watch   stepWatch
	unwatch func()
	// storage reused by every run
	states []tstate
	pend   []unsafe.Pointer
	sched  []int8
}

func newController(n int) *controller {
	c := &controller{touched: map[unsafe.Pointer]int32{}, race: newRacer(n), base: n, n: n,
		chans: map[unsafe.Pointer]*chanState{}, picked: -1}
	for i := 0; i < n; i++ {
		c.workers = append(c.workers, c.newWorker(i))
	}
	c.unwatch = watch(&c.watch, "(a replay)")
	return c
}

func (c *controller) newWorker(i int) *worker {
	w := &worker{c: c, id: i, state: finished}
	w.next, w.stop = iter.Pull(func(yield func(struct{}) bool) {
		w.yield = yield
		for {
			if !yield(struct{}{}) { // idle until a run hands it a script
				return
			}
			if w.runBody() {
				return
			}
		}
	})
	w.next() // run up to the first idle pause
	return w
}

// runBody runs the current script and reports whether the pool was stopped
// while it ran. A panic of the code under test is kept with its stack.
func (w *worker) runBody() (stopped bool) {
	defer func() {
		switch r := recover(); r {
		case nil:
		case errAbandon:
		case errStopped:
			stopped = true
		default:
			w.pval, w.pstack, w.panicked = r, debug.Stack(), true
		}
		w.state = finished
		w.curOp = -1
	}()
	w.body()
	return false
}

// pause hands control back to the controller; it returns when the
// controller schedules this thread again.
//
// While the controller unwinds the thread (abandon, close) it does not
// yield again: code under test may run deferred calls that reach a seam
// operation (a deferred Unlock) as the sentinel unwinds it, and each such
// operation panics with the sentinel again instead of pausing.
func (w *worker) pause() {
	if w.stopping {
		panic(errStopped)
	}
	if w.c.abandoning {
		panic(errAbandon)
	}
	if !w.yield(struct{}{}) {
		w.stopping = true
		panic(errStopped)
	}
	if w.c.abandoning {
		panic(errAbandon)
	}
}

// close stops every coroutine of the pool.
func (c *controller) close() {
	c.unwatch()
	for _, w := range c.workers {
		w.stop()
	}
	c.workers = nil
}

// Before implements hooked.Scheduler.
func (c *controller) Before(word unsafe.Pointer, op hooked.Op) {
	if c.direct || op == hooked.Plain && c.inlinePlain {
		return
	}
	w := c.cur
	w.state, w.pendWord, w.pendOp, w.pendReady, w.pendWhat = midOp, word, op, nil, ""
	w.pause()
}

// BeforeWhen implements hooked.Blocker: the thread pauses before op and
// is not runnable while ready reports false (execute asks it before every
// choice, with nothing running). In direct mode (setup, observations)
// nothing else can run to make it ready: an operation that must wait
// there is a deadlock of the scenario, and panics.
func (c *controller) BeforeWhen(word unsafe.Pointer, op hooked.Op, ready func() bool) {
	if c.direct {
		if !ready() {
			panic(fmt.Sprintf("explore: %s must wait outside the threads (in setup or an observation): nothing else runs there, so it never could", op))
		}
		return
	}
	w := c.cur
	w.state, w.pendWord, w.pendOp, w.pendReady, w.pendWhat = midOp, word, op, ready, ""
	w.pause()
	w.pendReady = nil
}

// After implements hooked.Scheduler.
func (c *controller) After(a hooked.Access) {
	if c.onAccess != nil {
		c.onAccess(a)
	}
	if c.direct || a.Op == hooked.Plain && c.inlinePlain {
		return
	}
	if c.pairs != nil {
		c.pairs.atomic(c.cur.id, a)
	}
	c.race.sync(c.cur.id, c.step, a, !c.noRaces)
	r := &c.rec
	r.raw, r.hasRaw = a, true
	r.acc.addr = a.Word
	seq, ok := c.touched[a.Word]
	if !ok {
		seq = int32(len(c.touched))
		c.touched[a.Word] = seq
	}
	r.acc.seq = seq
	r.acc.write = a.Wrote()
	r.acc.plain = a.Op == hooked.Plain
	if c.render != nil {
		r.vals[0], r.vals[1] = c.render(a)
		r.rendered = true
	}
	r.acc.seen = r.acc.write && c.seen != nil && c.seen(a)
	r.acc.live |= c.cur.curLive
}

// begin prepares a run: every worker gets its script and starts at a
// boundary.
func (c *controller) begin(bodies []func()) {
	clear(c.touched)
	c.race.reset()
	if c.pairs != nil {
		c.pairs.begin()
	}
	c.n = c.base
	for i, w := range c.workers {
		w.state = finished
		if i < c.base {
			w.body = bodies[i]
			w.state = atBoundary
		}
		w.ops, w.curOp, w.curLive = 0, -1, liveNone
		w.pendReady, w.pendWhat = nil, ""
		w.pval, w.pstack, w.panicked = nil, nil, false
		w.spawned, w.started, w.goSite, w.daemon = false, false, "", false
	}
	c.startSpawned() // goroutines the setup started
}

// run runs one step of thread t and records it in c.rec.
func (c *controller) run(t int) {
	w := c.workers[t]
	c.cur = w
	c.rec = stepRec{thread: t, op: w.curOp, acc: access{seq: -1, live: w.curLive}}
	if w.spawned && !w.started {
		c.rec.desc = "starts"
	}
	w.started = true
	c.watch.begin(t, w.curOp)
	w.next()
	c.watch.end()
	c.rec.midAfter = w.state == midOp
	c.rec.doneAfter = w.state == finished
	c.cur = nil
	if len(c.spawnQ) > 0 {
		c.startSpawned()
	}
}

// abandon unwinds every thread that has not finished.
func (c *controller) abandon() {
	c.abandoning = true
	for _, w := range c.workers[:c.n] {
		if w.spawned && !w.started {
			// A goroutine that never ran: none of its code runs now.
			w.state = finished
			continue
		}
		if w.state != finished {
			c.cur = w
			w.next()
		}
	}
	c.cur = nil
	c.abandoning = false
}

// stamp is the history time of the current step: calls and returns are
// ordered by the step that made them, a call before a return of the same
// step. Step s stamps 4s (call) and 4s+1 (return); 4s+2 and 4s+3 bracket
// an observation taken after it (observe).
func (c *controller) stamp(ret bool) int64 {
	s := int64(c.step) * 4
	if ret {
		s++
	}
	return s
}

// observe runs f after the current step, between it and the next one,
// and returns the interval it is stamped with. f runs quiet.
func (c *controller) observe(f func()) (call, ret int64) {
	c.quiet(f)
	return int64(c.step)*4 + 2, int64(c.step)*4 + 3
}

// install makes c the process's scheduler.
func (c *controller) install() { c.uninstall = hooked.Install(c) }

// Bound implements hooked.Bounder: the current program's value of the
// bound, or its real value v.
func (c *controller) Bound(name string, v uint64) uint64 {
	if b, ok := c.bounds[name]; ok {
		return b
	}
	return v
}

// remove uninstalls c.
func (c *controller) remove() {
	if c.uninstall != nil {
		c.uninstall()
		c.uninstall = nil
	}
}

// quiet runs f in direct mode with no scheduler installed, so the seam
// operations it makes are plain atomics: nothing else runs while it does
// (every thread is paused), and it only looks.
func (c *controller) quiet(f func()) {
	d := c.direct
	c.direct = true
	c.remove()
	defer func() {
		c.install()
		c.direct = d
	}()
	f()
}

// quietDirect runs f in direct mode with the scheduler installed: its
// operations are the twins' own, run at once with nothing recorded, and a
// blocking one that would wait panics (BeforeWhen). The twins of sync keep
// their explored state apart from their free-running one, so a check that
// locks must see the explored state: quiet would show it the other.
func (c *controller) quietDirect(f func()) {
	d := c.direct
	c.direct = true
	defer func() { c.direct = d }()
	f()
}

// operation runs one model operation of the current thread: a pause at the
// boundary before it (except for the thread's first), the call stamp, f,
// the return stamp. live is the operation's holder-liveness effect.
func (c *controller) operation(live int8, f func()) (call, ret int64) {
	if c.direct {
		call = c.stamp(false)
		f()
		ret = c.stamp(true)
		c.step++
		return call, ret
	}
	w := c.cur
	if w.ops > 0 {
		w.state = atBoundary
		w.pause()
		w = c.cur
	}
	w.ops++
	w.curOp = w.ops - 1
	w.curLive = live
	w.state = midOp
	c.rec.op = w.curOp
	c.rec.acc.call = true
	c.rec.acc.live |= live
	call = c.stamp(false)
	f()
	// The controller may have switched to other threads inside f; c.rec and
	// c.step are now those of the step that ran f's last seam operation.
	ret = c.stamp(true)
	c.rec.acc.ret = true
	c.completed++
	w.curOp, w.curLive = -1, liveNone
	w.state = atBoundary
	return call, ret
}
