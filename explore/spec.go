package explore

import (
	"time"

	"github.com/anishathalye/porcupine"
	iexplore "github.com/tollgate/tollgate/internal/interleave"
)

// Spec describes one exploration: the object under test (T), its
// operations' inputs (In) and outputs (Out), and the sequential model
// (state S) the runs must agree with.
type Spec[T, In, Out, S any] struct {
	// Name names the exploration in failures (Check uses the test's name
	// when it is empty).
	Name string
	// New builds a fresh object for every run. It runs with no switch
	// points, before the threads start.
	New func() T
	// Threads holds every thread's operations, in order.
	Threads [][]In
	// Call performs one operation on the object and returns its output.
	// CallThread, instead of Call, is also told which thread calls it:
	// thread is the index of the operation's thread in Threads, and
	// len(Threads) for After's operations. Per-thread state (what a
	// thread holds of a semaphore, a breaker's done callback) is kept by
	// it, in a value the object's New makes per thread or in the Spec's
	// closure, indexed by thread. Set one of Call and CallThread.
	Call       func(obj T, in In) Out
	CallThread func(obj T, thread int, in In) Out
	// After, when set, is run once all threads are done, one operation
	// after another, and is part of the history (a final read of the
	// object's state, for instance).
	After []In

	// The model: either Step with Init, or Model.
	//
	// Step applies one operation to the model's state at the clock's time
	// (the time when the operation takes effect: the clock thread's ticks
	// are in the history too) and returns the new state and the output the
	// object must have given. Init is the state of a new object.
	Init S
	Step func(s S, now time.Time, in In) (S, Out)
	// Equal compares two outputs (nil: reflect.DeepEqual).
	Equal func(a, b Out) bool
	// Model, instead of Step, is a porcupine model whose inputs are In
	// (and Tick, when there is a clock) and whose outputs are Out.
	Model *porcupine.Model

	// Invariant, when set, is checked after every step with every thread
	// paused; an error fails the run. It runs with no switch points and
	// must not wait (a Lock of a mutex some thread holds panics).
	Invariant func(obj T) error
	// Clock sets the virtual clock. Every run reads it, never the
	// machine's: with no Clock it stands still at DefaultStart.
	Clock *Clock
	// Describe renders an input in traces (nil: fmt's %v).
	Describe func(in In) string
	// Twins: the object's code calls the twins itself (explore/atomic,
	// explore/sync, explore/rt) instead of being rewritten, so Check does
	// not ask for its package to be rewritten.
	Twins bool
}

// Clock is the virtual clock of an exploration.
type Clock struct {
	// Start is the time when every run starts (zero: DefaultStart).
	Start time.Time
	// Ticks is the number of steps of the clock thread, an extra thread
	// (the last) that moves the clock forward by Tick at each; its steps
	// interleave with the others' like any thread's, so a reading may be
	// taken before or after each tick.
	Ticks int
	Tick  time.Duration
}

// DefaultStart is where the virtual clock starts when Clock.Start is zero.
var DefaultStart = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// Tick is the input of a clock-thread operation in the history: the clock
// moved to To.
type Tick struct{ To time.Time }

// Strategy is how schedules are chosen.
type Strategy string

// The strategies.
const (
	// DFS: every schedule with at most Bound preemptions, bounds 0, 1, …
	// in turn (so the first failure has the fewest), with sleep sets.
	DFS Strategy = "dfs"
	// PCT: seeded probabilistic concurrency testing (Burckhardt et al.).
	PCT Strategy = "pct"
	// Random: a seeded uniform random walk.
	Random Strategy = "random"
)

// Options configure an exploration. The zero value is DFS at bound 2.
type Options struct {
	Strategy Strategy
	// Bound is DFS's preemption bound (0: DefaultBound).
	Bound int
	// Schedules and Time cap the exploration (0: none for DFS; PCT and
	// Random run DefaultSchedules schedules when both are 0).
	Schedules int
	Time      time.Duration
	// Seed and Depth are PCT's and Random's.
	Seed  uint64
	Depth int
	// StepCap is the number of steps without a completed operation after
	// which a run is a progress violation (0: DefaultStepCap).
	StepCap int
	// Dir receives a failure's files (porcupine's visualization of the
	// history); empty: none are written, and nothing is left behind.
	Dir string
}

// The defaults of Options.
const (
	// DefaultSchedules is the number of schedules PCT and Random run
	// when neither Schedules nor Time is set.
	DefaultSchedules = iexplore.DefaultSchedules
	// DefaultStepCap is the step cap when StepCap is 0.
	DefaultStepCap = iexplore.DefaultStepCap
)

// DefaultBound is DFS's bound when Options.Bound is 0.
const DefaultBound = 2
