// Package explore checks concurrent Go code that nobody here wrote,
// deterministically: it runs a few threads of operations on one object,
// one step at a time, over every schedule within a preemption bound (or
// seeded random ones), and checks every run against a sequential model.
// The code under test is not changed: tollgate explore builds it through
// the go command's -overlay flag with its sync/atomic, sync and time
// calls rewritten to switch-point twins (explore/atomic, explore/sync,
// explore/rt; the rewrite is explore/rewrite).
//
// A test is a Spec and one call:
//
//	func TestLimiter(t *testing.T) {
//		explore.Check(t, explore.Spec[*rate.Limiter, string, bool, float64]{
//			New:     func() *rate.Limiter { return rate.NewLimiter(1, 1) },
//			Threads: [][]string{{"allow"}, {"allow"}},
//			Call:    func(l *rate.Limiter, _ string) bool { return l.Allow() },
//			Init:    1,
//			Step:    allowStep, // func(tokens float64, now time.Time, _ string) (float64, bool)
//			Clock:   &explore.Clock{Ticks: 1, Tick: time.Second},
//		})
//	}
//
// run with
//
//	tollgate explore -pkg ./limiter -run TestLimiter
//
// (plain go test builds the code unrewritten, and Check fails saying so).
// A Spec whose operations need to know their thread (what a thread holds
// of a semaphore, say) sets CallThread instead of Call: it is passed the
// thread's index in Threads.
//
// Scenarios need not be written by hand: CheckScenarios(t, spec,
// Scenarios{Op: draw, Threads: 3, Ops: 2}) draws them from a seed, explores
// each, and shrinks the first that fails to the fewest threads,
// operations and simplest inputs that still fail, with a replay command
// for it (Generate, outside a test).
//
// From a module of one's own: build the command from a checkout of
// tollgate (go install ./cmd/tollgate in it), and require
// github.com/tollgate/tollgate in the module's go.mod with a replace line
// pointing at the checkout, as examples/explore/go.mod does.
//
// # What a run is
//
// Every operation of the twins (an atomic load, store, compare-and-swap,
// add, swap; a mutex lock or unlock; a WaitGroup's add or wait; a reading
// of the clock; a channel operation) is a switch point: before it, the explorer decides which
// thread runs next. A thread that must wait (a Lock of a held mutex) is
// not runnable; a state where no thread can run is reported as a
// deadlock. Time is virtual: it starts at Clock.Start and moves only when
// the clock thread ticks (Clock.Ticks steps of Clock.Tick, interleaved
// like any thread), a thread sleeps, or a timer fires with nothing else
// to run. sync.Cond and sync.Map have twins
// too: every method of a Map is a switch point, so a Load then a Store of
// one key from two threads is the lost update it is.
//
// Every plain (non-atomic) load and store of memory another thread may
// reach — a field through a pointer, an element of a slice, a pointer's
// target, a package-level variable, a local variable a function literal
// captures or whose address is taken, a map — is reported to the explorer
// with its address, its size and its line, where Go makes it. They are no
// switch points: the explorer's race detector orders them by
// happens-before (the twins' operations are its edges) and reports two
// accesses of one location by two threads, one a store, that nothing
// orders as a data race naming both lines. (Under a scheduler without race
// detection a plain store is a switch point instead.)
//
// Goroutines, channels and select are controlled. A go statement starts
// a logical thread of the run (its arguments evaluated at the statement),
// numbered after the scenario's threads in the order they start, whose
// steps interleave like any thread's. Every channel operation (send,
// receive, close, len, a select) is a switch point with Go's semantics:
// an unbuffered send waits for its receiver, a buffered one for room;
// close wakes every receiver; a send on a closed channel, a close of a
// closed or nil channel panic; a nil channel waits forever. When a select
// has several ready cases, which it takes is part of the schedule: DFS
// explores each, the random strategies draw one, and the schedule records
// it ("1x1s2": thread 1's step took case 2). The race detector orders
// accesses by the channels' happens-before edges (a send before its
// receive completes, a close before the receive that sees it, a receive
// from an unbuffered channel before its send completes, the k-th receive
// before the (k+C)-th send on a channel of capacity C, a go statement
// before its goroutine). A goroutine still waiting when every other thread
// is done is a leak, naming its go statement. A test file is not
// rewritten: a test that receives from a channel the code under test gives
// it writes rt.Recv(ch), not <-ch, which would block the thread for real.
//
// Timers are controlled, on the virtual clock: time.NewTimer, After,
// AfterFunc, NewTicker, Tick and the timers' Stop and Reset. A timer's
// firing is a step of a thread of its own (numbered like a goroutine,
// never waited for, never a leak) that interleaves with the others':
// every strategy branches on it. A timer may fire once the clock has
// reached its deadline (the clock thread ticked, or a thread slept, past
// it), or when no other thread can run (the clock then jumps to the
// deadline), timers in the order of their deadlines; Stop and Reset have
// Go 1.23's semantics (a value sent and not received is taken back). The
// statement that made, reset or stopped a timer last happens before its
// firing, and the firing before the receive of its value or the first
// step of its AfterFunc.
//
// Contexts are controlled: the code under test's context.WithCancel,
// WithCancelCause, WithTimeout, WithTimeoutCause, WithDeadline,
// WithDeadlineCause, AfterFunc and Cause make twins whose Done is a
// channel the explorer keeps, whose Err is a switch point, whose cancel,
// from any thread, is one step that closes the Done channels of the
// context and of those below it, and whose deadline is a timer on the
// virtual clock. A cancel happens before a receive that finds Done closed
// and before an Err that reports it. A context from the test works as a
// parent (Background, TODO, one already cancelled); a test file, which is
// not rewritten, makes one the explorer controls with rt.WithCancel or
// rt.WithTimeout, as it receives with rt.Recv.
//
// What the explorer cannot control — runtime.Gosched, Goexit and
// LockOSThread, reflect.Select, a timer's Stop on a time.Timer that is not
// a pointer, assembly or cgo, and in a file older than go1.18 every go
// statement, channel operation and select — is listed with its file:line
// before anything runs, and a run that reaches one ends with that
// construct named, never left to run free.
//
// # The oracle
//
// Each run's operations, stamped by the step they started and ended in,
// form a history that must be linearizable with respect to the model: a
// Step function (state, the clock's time, input) → (state, output), or a
// porcupine Model. Invariant, when set, is checked after every step. A
// failure reports the schedule ("0x3.1x5.0x2": three steps of thread 0,
// five of thread 1, two of thread 0), a per-thread trace naming the line
// of the code under test at every step (file:line with the file's
// directory), the command that replays it (with the test's build tags),
// and, with Options.Dir, porcupine's visualization. A replayed schedule
// must fit its scenario: one that names a thread the scenario lacks, or
// gives a thread more steps than it takes, is an error. A panic in the
// model is a failure of the run, not a crash.
//
// One exploration runs at a time in a process.
package explore
