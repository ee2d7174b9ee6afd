package interleave

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/tollgate/tollgate/internal/fault"
	"github.com/tollgate/tollgate/internal/seam/hooked"
)

// Strategy is how schedules are chosen.
type Strategy string

// The strategies.
const (
	// DFS is the exhaustive search: every schedule within the preemption
	// bound, bounds 0, 1, … in turn, with sleep-set reduction.
	DFS Strategy = "dfs"
	// PCT is probabilistic concurrency testing with depth Options.Depth.
	PCT Strategy = "pct"
	// Random is a uniform random walk over the threads at every step.
	Random Strategy = "random"
)

// Defaults.
const (
	DefaultBound     = 2    // preemptions, DFS
	DefaultDepth     = 3    // PCT
	DefaultSchedules = 2000 // runs of a random strategy without a budget
	DefaultStepCap   = 5000 // steps without a completed operation
)

// Budget bounds an exploration; zero fields are no bound. DFS stops early
// (not exhaustive) when a budget runs out; the random strategies stop at
// DefaultSchedules runs when both fields are zero.
type Budget struct {
	Schedules int
	Time      time.Duration
}

// Options configure Explore.
type Options struct {
	Strategy Strategy // DFS when empty
	// Bound is the largest preemption bound of DFS (0: DefaultBound; a
	// negative value: bound 0, no preemptions at all).
	Bound int
	// FromBound, when above 0, leaves out DFS's passes at the bounds
	// below it, which an exploration before this one ran (Hunt explores
	// every scenario one bound at a time): the pass at Bound holds every
	// schedule within it, so the result is as exhaustive; only a failure
	// with fewer preemptions is no longer found first.
	FromBound int
	// Depth is the PCT depth d (0: DefaultDepth).
	Depth  int
	Budget Budget
	// Seed makes the random strategies reproducible.
	Seed uint64
	// Fault selects the explored table: fault.None is the real code.
	Fault fault.Fault
	// StepCap is the number of steps without a completed operation after
	// which a run is a progress violation (0: DefaultStepCap).
	StepCap int
	// NoReduction turns the sleep sets off (DFS): for measuring them.
	NoReduction bool
	// Uncapped explores every scenario at Bound, past a cap its Within
	// sets: for the deeper searches that find runs the default run's caps
	// leave out (scripts/explore-pair-runs.sh), never the default run.
	Uncapped bool
	// NoRaces turns the data-race detector off, and InlinePlainStores
	// makes a plain store no switch point of its own (it runs inside the
	// step before it, as a plain load does): both for measuring what the
	// detector costs and finds (spec/explore.md §4), never for a verdict.
	NoRaces, InlinePlainStores bool
	// SitePairs, when set, collects the interleaving coverage of every run
	// (sitepairs.go): a measurement that records every step's call site,
	// never part of a verdict.
	SitePairs *SitePairs
	// Remote, when set, explores the scenario on a table behind a server
	// at the grain of its requests (remote.go) instead of in memory.
	Remote *Remote
	// Dir receives porcupine's visualization of a failing history (empty:
	// no files).
	Dir string
	// Progress, when set, is called about every 200 ms and at the end.
	Progress func(Result)
}

func (o Options) bound() int {
	switch {
	case o.Bound < 0:
		return 0
	case o.Bound == 0:
		return DefaultBound
	}
	return o.Bound
}

func (o Options) depth() int {
	if o.Depth <= 0 {
		return DefaultDepth
	}
	return o.Depth
}

func (o Options) stepCap() int {
	if o.StepCap <= 0 {
		return DefaultStepCap
	}
	return o.StepCap
}

func (o Options) strategy() Strategy {
	if o.Strategy == "" {
		return DFS
	}
	return o.Strategy
}

// Kind is the kind of a failure.
type Kind string

// The kinds of failure.
const (
	// KindLinearizability: porcupine found no linearization of the run's
	// history that the model accepts (or CheckEpochs an epoch issued twice).
	KindLinearizability Kind = "linearizability"
	// KindInvariant: the history is linearizable but what the table shows
	// afterwards is not what the model shows (final snapshot, enqueued
	// rows, T1 conservation), or a toy's own check failed.
	KindInvariant Kind = "invariant"
	// KindProgress: no operation completed within the step cap while
	// threads kept stepping (lock-freedom).
	KindProgress Kind = "progress"
	// KindPanic: the code under test panicked.
	KindPanic Kind = "panic"
	// KindDeadlock: every thread that has not finished waits before a
	// blocking operation (a mutex, a WaitGroup) that no thread can release.
	KindDeadlock Kind = "deadlock"
	// KindRace: two plain accesses of different threads to the same
	// memory, at least one a store, unordered by happens-before (a data
	// race: spec/explore.md §4).
	KindRace Kind = "data race"
	// KindLeak: the program's threads are done and a goroutine its code
	// started waits forever (chan.go).
	KindLeak Kind = "leak"
)

// Failure is a run that failed, with what is needed to read and replay it.
type Failure struct {
	Kind      Kind
	Invariant string // the spec ID, when known (C16, C3, T11, T1, …)
	Detail    string
	Thread    int    // the thread that panicked (KindPanic), else -1
	Stack     string // its stack
	Panic     any    // the value it panicked with

	Scenario    string
	Strategy    Strategy
	Seed        uint64
	Bound       int // DFS: the bound being explored
	Depth       int // PCT
	Mutant      string
	Backend     string // the Remote's name when explored on a server ("etcd"); "" in memory
	Schedule    string // run-length encoded; Replay takes it
	Preemptions int
	Shrunk      string // the schedule as found, before shrinking (random strategies)
	Trace       string // the per-thread trace of the replayed schedule
	HTMLPath    string // porcupine's visualization, when written
	JSONPath    string // the history, when written
	// Replay is the command that replays the failure, when it is not the
	// catalogue's tollgate explore -scenario line.
	Replay string
}

// Report renders the failure for a person.
func (f *Failure) Report() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s violation in scenario %s", f.Kind, f.Scenario)
	if f.Invariant != "" {
		fmt.Fprintf(&b, " (%s)", f.Invariant)
	}
	fmt.Fprintf(&b, "\n  %s\n", f.Detail)
	if f.Mutant != "" {
		fmt.Fprintf(&b, "  mutant %s, ", f.Mutant)
	} else {
		b.WriteString("  ")
	}
	fmt.Fprintf(&b, "strategy %s", f.Strategy)
	switch f.Strategy {
	case DFS:
		fmt.Fprintf(&b, ", bound %d", f.Bound)
	case PCT:
		fmt.Fprintf(&b, ", depth %d, seed %d", f.Depth, f.Seed)
	case Random:
		fmt.Fprintf(&b, ", seed %d", f.Seed)
	}
	fmt.Fprintf(&b, "\n  schedule %s (%d preemptions)\n", f.Schedule, f.Preemptions)
	if f.Shrunk != "" {
		fmt.Fprintf(&b, "  shrunk from %s\n", f.Shrunk)
	}
	mutant := ""
	if f.Mutant != "" && f.Mutant != fault.None.String() {
		mutant = " -mutant " + f.Mutant
	}
	if f.Backend != "" {
		mutant = " -backend " + f.Backend + mutant
	}
	if f.Replay != "" {
		fmt.Fprintf(&b, "  replay: %s\n", f.Replay)
	} else {
		fmt.Fprintf(&b, "  replay: tollgate explore -scenario %s%s -replay %s\n", f.Scenario, mutant, f.Schedule)
	}
	if f.HTMLPath != "" {
		fmt.Fprintf(&b, "  porcupine: %s\n", f.HTMLPath)
	}
	if f.Trace != "" {
		b.WriteString("\n")
		b.WriteString(f.Trace)
	}
	if f.Stack != "" {
		fmt.Fprintf(&b, "\nstack of the panic:\n%s", f.Stack)
	}
	return b.String()
}

// copy returns a fresh copy (nil for nil), so a cached verdict is never
// changed by the report built around it.
func (f *Failure) copy() *Failure {
	if f == nil {
		return nil
	}
	g := *f
	return &g
}

func (f *Failure) Error() string { return fmt.Sprintf("%s: %s: %s", f.Scenario, f.Kind, f.Detail) }

// Result is what an exploration did.
type Result struct {
	Scenario string
	Threads  int
	Ops      int // model operations of the threads (setup not counted)
	Strategy Strategy
	Mutant   string
	Bound    int // DFS: the bound reached
	Depth    int
	Seed     uint64
	// Schedules is the number of complete runs checked: for DFS, at the
	// last bound explored (PerBound has every bound's).
	Schedules int
	PerBound  []int
	// Blocked counts DFS runs cut short by sleep sets (redundant).
	Blocked int
	// Ended counts the runs that ended at a documented panic of the code
	// (a reserve at a lowered generation cap, edges.go), judged as such.
	Ended int
	// Histories is the number of distinct histories porcupine checked.
	Histories int
	// Exhaustive: DFS explored every schedule within Bound.
	Exhaustive bool
	Elapsed    time.Duration
	Failure    *Failure
	Err        error // the exploration could not run (e.g. nondeterminism)
}

// Summary is one line: "exhaustive: N schedules within bound k" or what
// was run.
func (r Result) Summary() string {
	switch {
	case r.Err != nil:
		return "error: " + r.Err.Error()
	case r.Failure != nil:
		return fmt.Sprintf("%s violation after %d schedules: %s", r.Failure.Kind, r.Schedules, r.Failure.Detail)
	case r.Exhaustive:
		return fmt.Sprintf("exhaustive: %d schedules within bound %d", r.Schedules, r.Bound)
	case r.Strategy == DFS:
		return fmt.Sprintf("not exhaustive: %d schedules within bound %d before the budget ran out", r.Schedules, r.Bound)
	}
	return fmt.Sprintf("%d schedules, no violation", r.Schedules)
}

// explorer drives one exploration of a program.
type explorer struct {
	c     *controller
	p     program
	opt   Options
	name  string
	start time.Time
	last  time.Time
	res   Result
}

func (x *explorer) overBudget() bool {
	b := x.opt.Budget
	if b.Schedules > 0 && x.totalRuns() >= b.Schedules {
		return true
	}
	return b.Time > 0 && time.Since(x.start) >= b.Time
}

func (x *explorer) totalRuns() int {
	n := 0
	for _, c := range x.res.PerBound {
		n += c
	}
	if x.opt.strategy() != DFS {
		n = x.res.Schedules
	}
	return n
}

func (x *explorer) progress() {
	if x.opt.Progress == nil {
		return
	}
	if now := time.Now(); now.Sub(x.last) >= 200*time.Millisecond {
		x.last = now
		r := x.res
		r.Elapsed = time.Since(x.start)
		x.opt.Progress(r)
	}
}

// exploreProgram runs the exploration of p.
func exploreProgram(p program, name string, opt Options) Result {
	x := &explorer{p: p, opt: opt, name: name, start: time.Now()}
	x.res = Result{Scenario: name, Threads: p.threads(), Strategy: opt.strategy(), Mutant: opt.Fault.String(),
		Seed: opt.Seed}
	x.c = newController(p.threads())
	x.c.named(name)
	x.c.noRaces, x.c.inlinePlain = opt.NoRaces, opt.InlinePlainStores
	if opt.SitePairs != nil {
		defer x.c.trackPairs(opt.SitePairs, name)()
	}
	x.c.install()
	func() {
		defer x.c.remove()
		defer x.c.close()
		switch x.opt.strategy() {
		case DFS:
			x.dfs()
		case PCT, Random:
			x.random()
		default:
			x.res.Err = fmt.Errorf("explore: unknown strategy %q (dfs, pct, random)", opt.Strategy)
		}
	}()
	x.res.Elapsed = time.Since(x.start)
	if c, ok := p.(interface{ histories() int }); ok {
		x.res.Histories = c.histories()
	}
	if x.opt.Progress != nil {
		x.opt.Progress(x.res)
	}
	return x.res
}

func (x *explorer) runOpts() runOptions { return runOptions{stepCap: x.opt.stepCap()} }

func (x *explorer) dfs() {
	top := x.opt.bound()
	for b := 0; b <= top; b++ {
		x.res.Bound = b
		x.res.PerBound = append(x.res.PerBound, 0)
		if b < x.opt.FromBound && b < top {
			continue
		}
		d := newDFS(b, !x.opt.NoReduction)
		for {
			if x.overBudget() {
				x.res.Schedules = x.res.PerBound[b]
				return
			}
			d.depth = 0
			r := execute(x.c, x.p, d, x.runOpts())
			if d.err != nil {
				x.res.Err = d.err
				return
			}
			switch r.status {
			case blocked:
				x.res.Blocked++
			case ended:
				x.res.Ended++
				x.res.PerBound[b]++
			default:
				x.res.PerBound[b]++
			}
			x.res.Schedules = x.res.PerBound[b]
			if r.failure != nil {
				x.fail(r, b)
				return
			}
			x.progress()
			if !d.backtrack() {
				break
			}
		}
	}
	x.res.Exhaustive = true
}

func (x *explorer) random() {
	n := x.p.threads()
	budget := x.opt.Budget
	if budget.Schedules == 0 && budget.Time == 0 {
		x.opt.Budget.Schedules = DefaultSchedules
	}
	x.res.Depth = x.opt.depth()
	estimate := 0
	for i := 0; !x.overBudget(); i++ {
		rng := rand.New(rand.NewPCG(x.opt.Seed, uint64(i)))
		var ch chooser
		if x.opt.strategy() == PCT {
			k := estimate
			if k == 0 {
				k = 20 * n
			}
			ch = newPCT(rng, n, x.opt.depth(), k)
		} else {
			ch = &walk{rng: rng}
		}
		opt := x.runOpts()
		check := i%replayCheckEvery == 0
		var first []access
		if check {
			opt.observer = func(_ *controller, s *stepRec) { first = append(first, s.acc) }
		}
		r := execute(x.c, x.p, ch, opt)
		estimate = max(estimate, len(r.schedule))
		x.res.Schedules++
		if r.status == ended {
			x.res.Ended++
		}
		if r.failure != nil {
			x.fail(r, 0)
			return
		}
		if check && r.status == complete {
			if err := x.sameOnReplay(r.schedule, first); err != nil {
				x.res.Err = err
				return
			}
		}
		x.progress()
	}
}

// replayCheckEvery: the random strategies run every so many schedules
// (the first included) a second time and compare the two runs step by
// step, so that code which is not deterministic is reported as it is by
// DFS, instead of passing unnoticed (its failures could not be replayed).
// It costs one run in 32.
const replayCheckEvery = 32

// sameOnReplay runs sched again and reports an error when a step differs
// from the one first recorded (its thread's word, kind or history stamps;
// addresses change from run to run and are not compared).
func (x *explorer) sameOnReplay(sched []int8, first []access) error {
	sched = slices.Clone(sched) // execute reuses the storage
	var again []access
	opt := x.runOpts()
	opt.observer = func(_ *controller, s *stepRec) { again = append(again, s.acc) }
	execute(x.c, x.p, &follow{s: sched}, opt)
	for k := range min(len(first), len(again)) {
		if !first[k].same(again[k]) {
			return fmt.Errorf("explore: schedule %s ran differently the second time, at step %d: the code under test is not deterministic (a random seed, a map's order, the machine's clock?)", encodeSchedule(sched), k+1)
		}
	}
	if len(first) != len(again) {
		return fmt.Errorf("explore: schedule %s took %d steps, then %d: the code under test is not deterministic", encodeSchedule(sched), len(first), len(again))
	}
	return nil
}

// fail completes a failure: shrinks a random one, replays it with tracing
// and writes the history's files.
func (x *explorer) fail(r runResult, bound int) {
	f := r.failure
	sched := slices.Clone(r.schedule) // execute reuses its storage
	if x.opt.strategy() != DFS {
		found := encodeSchedule(sched)
		sched, _ = shrink(x.c, x.p, sched, r.preemptions, f.Kind, x.opt.stepCap())
		if s := encodeSchedule(sched); s != found {
			f.Shrunk = fmt.Sprintf("%s (%d preemptions)", found, r.preemptions)
		}
	}
	rep := replay(x.c, x.p, sched, x.opt.stepCap(), x.opt.Dir, x.name)
	if rep.failure != nil {
		rep.failure.Shrunk = f.Shrunk
		f = rep.failure
	}
	f.Scenario, f.Strategy, f.Seed, f.Bound, f.Mutant = x.name, x.opt.strategy(), x.opt.Seed, bound, x.opt.Fault.String()
	if r := x.opt.Remote; r != nil {
		f.Backend = r.Name
	}
	if f.Strategy == PCT {
		f.Depth = x.opt.depth()
	}
	f.Schedule, f.Preemptions, f.Trace = encodeSchedule(rep.schedule), rep.preemptions, rep.trace
	x.res.Failure = f
}

// replayed is one traced run.
type replayed struct {
	runResult
	trace string
}

// replay runs sched once with tracing; dir receives the history's files
// when the run fails.
func replay(c *controller, p program, sched []int8, stepCap int, dir, name string) replayed {
	tr := p.tracer()
	if fw, ok := p.(interface{ writeFiles(dir, name string) }); ok {
		fw.writeFiles(dir, name)
		defer fw.writeFiles("", "")
	}
	opt := runOptions{stepCap: stepCap, keep: true, outcome: true}
	hooked.SetSites(true)
	defer hooked.SetSites(false)
	if tr != nil {
		opt.observer = func(c *controller, r *stepRec) { tr.observe(c, r) }
		// Each seam operation is rendered as it runs, so its values are
		// what the words held then, not what they hold at the end.
		c.render = func(a hooked.Access) (string, string) { return accessValues(tr, a) }
		defer func() { c.render = nil }()
	}
	r := execute(c, p, &follow{s: sched}, opt)
	return replayed{runResult: r, trace: renderTrace(p, tr, r)}
}

// ErrNotExplorable is returned for a Scenario value that was not made by
// CreditsScenario or TokenBucketScenario.
var ErrNotExplorable = errors.New("explore: the scenario has no script (make it with CreditsScenario or TokenBucketScenario)")

// Explore explores s with opt. One exploration runs at a time in a process
// (it installs the process's one hooked.Scheduler; a second concurrent
// call panics), and no other goroutine may use a hooked table meanwhile.
func Explore(s Scenario, opt Options) Result {
	if s.fixed != "" {
		return exploreFixed(s, opt)
	}
	p, err := s.programOn(opt.Fault, opt.Remote)
	if err != nil {
		return Result{Scenario: s.Name, Threads: s.Threads(), Ops: s.Ops(), Strategy: opt.strategy(), Mutant: opt.Fault.String(), Err: err}
	}
	if s.most > 0 && opt.bound() > s.most && !opt.Uncapped {
		opt.Bound = s.most
	}
	r := exploreProgram(p, s.Name, opt)
	r.Ops = s.Ops()
	if r.Failure != nil && r.Failure.Invariant == "" && r.Failure.Kind == KindProgress {
		r.Failure.Invariant = map[Primitive]string{Credits: "C16", TokenBucket: "T11"}[s.Primitive]
	}
	return r
}

// FixedSchedule is the Strategy of a Result that replayed a directed run's
// one schedule (Scenario.Fixed).
const FixedSchedule Strategy = "directed"

// exploreFixed replays a directed run's schedule once, as a Result.
func exploreFixed(s Scenario, opt Options) Result {
	start := time.Now()
	r := Result{Scenario: s.Name, Threads: s.Threads(), Ops: s.Ops(), Strategy: FixedSchedule, Mutant: opt.Fault.String()}
	rep, err := replayCollecting(s, opt.Remote, opt.Fault, s.fixed, opt.Dir, opt.SitePairs)
	r.Elapsed = time.Since(start)
	if err != nil {
		r.Err = err
		return r
	}
	r.Schedules, r.Failure = 1, rep.Failure
	return r
}

// Replayed is one replayed schedule.
type Replayed struct {
	Schedule    string // as executed (the fallback may have extended it)
	Preemptions int
	Trace       string
	Failure     *Failure // nil when the run passed
	Outcome     string   // every thread's answers and the final table
}

// Replay runs schedule (as a failure report prints it) once on s over
// mutant's table, with tracing, and reports what happened. It writes no
// files; ReplayDir does.
func Replay(s Scenario, mutant fault.Fault, schedule string) (Replayed, error) {
	return ReplayDir(s, mutant, schedule, "")
}

// ReplayDir is Replay writing porcupine's visualization of a failing
// history into dir.
func ReplayDir(s Scenario, mutant fault.Fault, schedule, dir string) (Replayed, error) {
	return ReplayRemote(s, nil, mutant, schedule, dir)
}

// ReplayRemote is ReplayDir on the remote backend r (nil: in memory).
func ReplayRemote(s Scenario, remote *Remote, mutant fault.Fault, schedule, dir string) (Replayed, error) {
	return replayCollecting(s, remote, mutant, schedule, dir, nil)
}

// replayCollecting is ReplayRemote that, when sp is set, collects the
// run's interleaving coverage into sp, as an exploration does: a directed
// or kept run's pairs count in the default run's table.
func replayCollecting(s Scenario, remote *Remote, mutant fault.Fault, schedule, dir string, sp *SitePairs) (Replayed, error) {
	sched, err := ParseSchedule(schedule)
	if err != nil {
		return Replayed{}, err
	}
	p, err := s.programOn(mutant, remote)
	if err != nil {
		return Replayed{}, err
	}
	c := newController(p.threads())
	if sp != nil {
		defer c.trackPairs(sp, s.Name)()
	}
	c.install()
	defer c.remove()
	defer c.close()
	r := replay(c, p, sched, DefaultStepCap, dir, s.Name)
	out := Replayed{Schedule: encodeSchedule(r.schedule), Preemptions: r.preemptions, Trace: r.trace, Failure: r.failure, Outcome: r.outcome}
	if f := out.Failure; f != nil {
		f.Scenario, f.Mutant, f.Schedule, f.Preemptions, f.Trace = s.Name, mutant.String(), out.Schedule, out.Preemptions, out.Trace
		f.Strategy = "replay"
		if remote != nil {
			f.Backend = remote.Name
		}
	}
	return out, nil
}

// outcomes runs the DFS of p at bound and returns the set of outcomes of
// its complete runs and the number of schedules (for the reduction test).
func outcomes(p program, bound int, reduce bool) (map[string]bool, int, error) {
	c := newController(p.threads())
	c.install()
	defer c.remove()
	defer c.close()
	set := map[string]bool{}
	n := 0
	d := newDFS(bound, reduce)
	for {
		d.depth = 0
		r := execute(c, p, d, runOptions{stepCap: DefaultStepCap, outcome: true})
		if d.err != nil {
			return nil, 0, d.err
		}
		if r.status == complete {
			n++
			verdict := "pass"
			if r.failure != nil {
				verdict = string(r.failure.Kind)
			}
			set[verdict+" | "+r.outcome] = true
		} else if r.status != blocked {
			return nil, 0, fmt.Errorf("explore: run ended %d: %v", r.status, r.failure)
		}
		if !d.backtrack() {
			return set, n, nil
		}
	}
}
