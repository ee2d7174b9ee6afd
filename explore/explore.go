package explore

import (
	"errors"
	"fmt"
	"os"
	"reflect"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/tollgate/tollgate/explore/internal/vclock"
	"github.com/tollgate/tollgate/explore/rt"
	iexplore "github.com/tollgate/tollgate/internal/interleave"
	"github.com/tollgate/tollgate/internal/seam/hooked"
)

// Result is what an exploration did.
type Result struct {
	Name     string
	Strategy Strategy
	Bound    int // DFS: the bound reached
	// Schedules is the number of complete runs checked (DFS: at the last
	// bound; PerBound has each bound's).
	Schedules int
	PerBound  []int
	// Exhaustive: DFS ran every schedule within Bound.
	Exhaustive bool
	// Histories is the number of distinct histories porcupine checked.
	Histories int
	Elapsed   time.Duration
	// Failure is the first failing run, nil when none failed.
	Failure *Failure
	// Err: the exploration could not give a verdict: the code reached a
	// construct the explorer cannot control (an *rt.UnsupportedError), it
	// is not deterministic, or the Spec is wrong.
	Err error
}

// Summary is one line.
func (r Result) Summary() string {
	switch {
	case r.Err != nil:
		return "no verdict: " + r.Err.Error()
	case r.Failure != nil:
		return fmt.Sprintf("%s violation after %d schedules: %s", r.Failure.Kind, r.Schedules, r.Failure.Detail)
	case r.Exhaustive:
		return fmt.Sprintf("exhaustive: %d schedules within bound %d, no violation", r.Schedules, r.Bound)
	case r.Strategy == DFS:
		return fmt.Sprintf("not exhaustive: %d schedules within bound %d before the budget ran out, no violation", r.Schedules, r.Bound)
	}
	return fmt.Sprintf("%d schedules, no violation", r.Schedules)
}

// Failure is a failing run.
type Failure struct {
	// Kind is linearizability, invariant, deadlock, leak (a goroutine
	// the code started waits forever), progress, data race or panic.
	Kind   string
	Detail string
	// Schedule replays the run (Replay, or -explore.replay).
	Schedule    string
	Preemptions int
	// Trace is the per-thread trace of the run.
	Trace string
	// HTML is porcupine's visualization of the history, when written.
	HTML string
	// Replay is the command that replays it.
	Replay string
	// Report is all of the above, for a person.
	Report string
}

// Explore explores spec with opt. replay is the command a failure's report
// gives to replay it, with %s where the schedule goes ("" for none).
func Explore[T, In, Out, S any](spec Spec[T, In, Out, S], opt Options, replay string) Result {
	res := Result{Name: spec.Name, Strategy: opt.strategy()}
	r, err := build(spec, replay)
	if err != nil {
		res.Err = err
		return res
	}
	defer vclock.Stop()
	if opt.Dir != "" {
		if err := os.MkdirAll(opt.Dir, 0o777); err != nil {
			res.Err = fmt.Errorf("explore: Options.Dir: %v", err)
			return res
		}
	}
	io := iexplore.Options{Strategy: iexplore.Strategy(opt.strategy()), Bound: opt.bound(), Seed: opt.Seed,
		Depth: opt.Depth, StepCap: opt.StepCap, Dir: opt.Dir,
		Budget: iexplore.Budget{Schedules: opt.Schedules, Time: opt.Time}}
	ir := iexplore.ExploreOps(r.ops, io)
	res.Bound, res.Schedules, res.PerBound, res.Exhaustive = ir.Bound, ir.Schedules, ir.PerBound, ir.Exhaustive
	res.Histories, res.Elapsed, res.Err = len(r.verdicts), ir.Elapsed, ir.Err
	if f := ir.Failure; f != nil {
		var u *rt.UnsupportedError
		if e, ok := f.Panic.(error); ok && errors.As(e, &u) {
			res.Err = u
		} else {
			res.Failure = failureOf(f)
		}
	}
	return res
}

// Replay runs schedule once on spec with tracing and returns the failure,
// nil when the run passes, and the trace either way.
//
// A schedule must fit the scenario: it names only its threads (the clock
// thread is the last), and a run that passes must take the schedule's
// steps as written (a schedule that gives a thread more steps than it
// takes is an error, not a pass). A prefix of a run's schedule is
// completed as the explorer does (the thread that ran last goes on, or
// else the lowest one still running).
func Replay[T, In, Out, S any](spec Spec[T, In, Out, S], schedule, dir string) (trace string, f *Failure, err error) {
	r, err := build(spec, "")
	if err != nil {
		return "", nil, err
	}
	want, err := iexplore.ParseSchedule(schedule)
	if err != nil {
		return "", nil, err
	}
	if dir != "" {
		if err := os.MkdirAll(dir, 0o777); err != nil {
			return "", nil, err
		}
	}
	defer vclock.Stop()
	rep, err := iexplore.ReplayOps(r.ops, schedule, dir)
	if err != nil {
		return "", nil, err
	}
	ran, err := iexplore.ParseSchedule(rep.Schedule)
	if err != nil {
		return "", nil, err
	}
	// A run that passes must take the schedule's steps as written; one
	// that fails may end before them, but not leave them.
	n := min(len(ran), len(want))
	if rep.Failure == nil && len(ran) < len(want) || !slices.Equal(ran[:n], want[:n]) {
		for _, t := range want {
			if int(t) >= r.ops.Threads && !slices.Contains(ran, t) {
				return rep.Trace, nil, fmt.Errorf("explore: schedule %s names thread %d, but the scenario has %d threads (0 to %d%s) and its run started no goroutine %d",
					schedule, t, r.ops.Threads, r.ops.Threads-1, map[bool]string{true: ", the last the clock's", false: ""}[r.ops.Names != nil], t)
			}
		}
		return rep.Trace, nil, fmt.Errorf("explore: schedule %s does not fit the scenario: its run took %s (a thread finished, or was not ready, before the schedule's steps for it ran out)", schedule, rep.Schedule)
	}

	if rep.Failure != nil {
		var u *rt.UnsupportedError
		if e, ok := rep.Failure.Panic.(error); ok && errors.As(e, &u) {
			return rep.Trace, nil, u
		}
		return rep.Trace, failureOf(rep.Failure), nil
	}
	return rep.Trace, nil, nil
}

func failureOf(f *iexplore.Failure) *Failure {
	return &Failure{Kind: string(f.Kind), Detail: f.Detail, Schedule: f.Schedule, Preemptions: f.Preemptions,
		Trace: f.Trace, HTML: f.HTMLPath, Replay: f.Replay, Report: f.Report()}
}

func (o Options) strategy() Strategy {
	if o.Strategy == "" {
		return DFS
	}
	return o.Strategy
}

func (o Options) bound() int {
	if o.Bound <= 0 {
		return DefaultBound
	}
	return o.Bound
}

// run is a Spec made into the explorer's program.
type run[T, In, Out, S any] struct {
	spec     Spec[T, In, Out, S]
	model    porcupine.Model
	obj      T
	outs     [][]Out
	ticks    []time.Time
	start    time.Time
	ops      *iexplore.Ops
	verdicts map[string]bool
	// panicked is the model's first panic in the current check.
	panicked modelPanic
}

// modelPanic records a panic of the model's functions, which porcupine
// calls on goroutines of its own: there it would kill the process.
type modelPanic struct {
	mu    sync.Mutex
	what  string
	value any
	stack []byte
}

func (p *modelPanic) record(what string, v any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.what == "" {
		p.what, p.value, p.stack = what, v, debug.Stack()
	}
}

// take returns the panic recorded, if any, and forgets it.
func (p *modelPanic) take() (what string, v any, stack []byte) {
	p.mu.Lock()
	defer p.mu.Unlock()
	what, v, stack = p.what, p.value, p.stack
	p.what, p.value, p.stack = "", nil, nil
	return what, v, stack
}

// guard makes a panic of m's Init, Step or Equal a recorded failure of
// the check (Step then rejects the operation) instead of a crash.
func guard(m porcupine.Model, p *modelPanic) porcupine.Model {
	init, step, equal := m.Init, m.Step, m.Equal
	m.Init = func() (st any) {
		defer func() {
			if v := recover(); v != nil {
				p.record("Init", v)
			}
		}()
		return init()
	}
	m.Step = func(st, in, out any) (ok bool, next any) {
		defer func() {
			if v := recover(); v != nil {
				p.record(fmt.Sprintf("Step on input %v (output %v)", in, out), v)
				ok, next = false, st
			}
		}()
		return step(st, in, out)
	}
	if equal != nil {
		m.Equal = func(a, b any) (eq bool) {
			defer func() {
				if v := recover(); v != nil {
					p.record("Equal", v)
					eq = false
				}
			}()
			return equal(a, b)
		}
	}
	return m
}

func build[T, In, Out, S any](spec Spec[T, In, Out, S], replay string) (*run[T, In, Out, S], error) {
	if err := spec.validate(); err != nil {
		return nil, err
	}
	r := &run[T, In, Out, S]{spec: spec, verdicts: map[string]bool{}}
	r.model = guard(spec.porcupine(), &r.panicked)
	n := len(spec.Threads)
	var names []string
	if spec.Clock != nil && spec.Clock.Ticks > 0 {
		n++
		names = make([]string, n)
		names[n-1] = "clock"
	}
	name := spec.Name
	if name == "" {
		name = "explore"
	}
	r.ops = &iexplore.Ops{Name: name, Threads: n, Begin: r.begin, End: r.end, Outcome: r.outcome,
		Call: r.call, Ret: r.ret, Site: siteOf, Replay: replay, Names: names}
	if spec.Invariant != nil {
		r.ops.Check = func() string {
			if err := spec.Invariant(r.obj); err != nil {
				return "invariant: " + err.Error()
			}
			return ""
		}
	}
	if replay == "" {
		r.ops.Replay = "explore.Replay(spec, %q, dir)"
	}
	return r, nil
}

func (s Spec[T, In, Out, S]) validate() error {
	switch {
	case s.New == nil:
		return errors.New("explore: Spec.New is nil: it must build a fresh object for every run")
	case s.Call == nil && s.CallThread == nil:
		return errors.New("explore: Spec.Call and Spec.CallThread are nil: set one, to perform an operation on the object")
	case s.Call != nil && s.CallThread != nil:
		return errors.New("explore: Spec sets both Call and CallThread: set one")
	case len(s.Threads) == 0:
		return errors.New("explore: Spec.Threads is empty: give at least one thread's operations")
	case s.Step == nil && s.Model == nil:
		return errors.New("explore: Spec has no model: set Step (with Init) or Model")
	case s.Step != nil && s.Model != nil:
		return errors.New("explore: Spec sets both Step and Model: set one")
	case s.Clock != nil && s.Clock.Ticks > 0 && s.Clock.Tick <= 0:
		return fmt.Errorf("explore: Spec.Clock.Tick is %v: with Ticks > 0 it must be positive", s.Clock.Tick)
	case s.Clock != nil && s.Clock.Ticks < 0:
		return fmt.Errorf("explore: Spec.Clock.Ticks is %d: it must not be negative", s.Clock.Ticks)
	}
	for i, ops := range s.Threads {
		if len(ops) == 0 {
			return fmt.Errorf("explore: Spec.Threads[%d] is empty: every thread needs an operation", i)
		}
	}
	if len(s.Threads) > 100 {
		return fmt.Errorf("explore: Spec.Threads has %d threads: at most 100", len(s.Threads))
	}
	return nil
}

func (r *run[T, In, Out, S]) begin() [][]func() {
	spec := r.spec
	// The clock is virtual in every run, standing still at the start
	// when there is no Clock: no run ever reads the machine's.
	r.start = DefaultStart
	if c := spec.Clock; c != nil && !c.Start.IsZero() {
		r.start = c.Start
	}
	vclock.Start(r.start)
	r.obj = spec.New()
	if len(r.outs) != len(spec.Threads) {
		r.outs = make([][]Out, len(spec.Threads))
	}
	var ops [][]func()
	for t, ins := range spec.Threads {
		r.outs[t] = slices.Grow(r.outs[t][:0], len(ins))[:len(ins)]
		list := make([]func(), len(ins))
		for i, in := range ins {
			list[i] = func() { r.outs[t][i] = spec.call(r.obj, t, in) }
		}
		ops = append(ops, list)
	}
	if c := spec.Clock; c != nil && c.Ticks > 0 {
		r.ticks = slices.Grow(r.ticks[:0], c.Ticks)[:c.Ticks]
		list := make([]func(), c.Ticks)
		for i := range list {
			list[i] = func() { r.ticks[i] = tick(c.Tick) }
		}
		ops = append(ops, list)
	}
	return ops
}

// tick is one step of the clock thread: it moves the clock by d.
func tick(d time.Duration) time.Time {
	s := hooked.Current()
	w := vclock.Word()
	if s != nil {
		s.Before(w, hooked.Tick)
	}
	old := vclock.Elapsed()
	to := vclock.Advance(d)
	if s != nil {
		s.After(hooked.Access{Word: w, Op: hooked.Tick, Old: old, New: vclock.Elapsed(), OK: true})
	}
	return to
}

func (r *run[T, In, Out, S]) end(at [][][2]int64, dir string) (iexplore.Kind, string, []string) {
	spec := r.spec
	var ops []porcupine.Operation
	last := int64(0)
	for t, times := range at {
		for i, when := range times {
			op := porcupine.Operation{ClientId: t, Call: when[0], Return: when[1]}
			if t < len(spec.Threads) {
				op.Input, op.Output = spec.Threads[t][i], r.outs[t][i]
			} else {
				op.Input, op.Output = Tick{To: r.ticks[i]}, r.ticks[i]
			}
			ops = append(ops, op)
			last = max(last, when[1])
		}
	}
	for i, in := range spec.After {
		out := spec.call(r.obj, len(spec.Threads), in)
		ops = append(ops, porcupine.Operation{ClientId: len(at), Input: in, Output: out,
			Call: last + 1 + 2*int64(i), Return: last + 2 + 2*int64(i)})
	}
	key := canonical(ops)
	if ok, seen := r.verdicts[key]; seen && (ok || dir == "") {
		if ok {
			return "", "", nil
		}
		return iexplore.KindLinearizability, "no linearization of the history agrees with the model:\n" + describeHistory(ops, spec), nil
	}
	r.panicked.take()
	res, info := porcupine.CheckOperationsVerbose(r.model, ops, 0)
	if what, v, stack := r.panicked.take(); what != "" {
		return iexplore.KindPanic, fmt.Sprintf("the model panicked in %s: %v\n%s\nthe history:\n%s", what, v, stack, describeHistory(ops, spec)), nil
	}
	r.verdicts[key] = res == porcupine.Ok
	if res == porcupine.Ok {
		return "", "", nil
	}
	detail := "no linearization of the history agrees with the model:\n" + describeHistory(ops, spec)
	var files []string
	if dir != "" {
		path := dir + "/" + sanitize(r.ops.Name) + ".html"
		if err := porcupine.VisualizePath(r.model, info, path); err == nil {
			files = append(files, path)
		}
	}
	return iexplore.KindLinearizability, detail, files
}

func (r *run[T, In, Out, S]) outcome() string {
	return fmt.Sprint(r.outs)
}

func (r *run[T, In, Out, S]) call(t, i int) string {
	if t >= len(r.spec.Threads) {
		return "tick"
	}
	return r.spec.describe(r.spec.Threads[t][i])
}

func (r *run[T, In, Out, S]) ret(t, i int) string {
	if t >= len(r.spec.Threads) {
		return "+" + r.ticks[i].Sub(r.start).String()
	}
	return fmt.Sprint(r.outs[t][i])
}

// call performs in on obj for thread t.
func (s Spec[T, In, Out, S]) call(obj T, t int, in In) Out {
	if s.CallThread != nil {
		return s.CallThread(obj, t, in)
	}
	return s.Call(obj, in)
}

func (s Spec[T, In, Out, S]) describe(in In) string {
	if s.Describe != nil {
		return s.Describe(in)
	}
	return fmt.Sprintf("%v", in)
}

// state is the model's state under a Step: the user's, and the clock.
type state[S any] struct {
	s   S
	now time.Time
}

func (s Spec[T, In, Out, S]) porcupine() porcupine.Model {
	if s.Model != nil {
		return *s.Model
	}
	start := DefaultStart
	if s.Clock != nil && !s.Clock.Start.IsZero() {
		start = s.Clock.Start
	}
	equal := s.Equal
	if equal == nil {
		equal = func(a, b Out) bool { return reflect.DeepEqual(a, b) }
	}
	return porcupine.Model{
		Init: func() any { return state[S]{s: s.Init, now: start} },
		Step: func(st, input, output any) (bool, any) {
			x := st.(state[S])
			if tk, ok := input.(Tick); ok {
				x.now = tk.To
				return true, x
			}
			next, want := s.Step(x.s, x.now, input.(In))
			if !equal(want, output.(Out)) {
				return false, st
			}
			x.s = next
			return true, x
		},
		Equal: func(a, b any) bool { return reflect.DeepEqual(a, b) },
		DescribeOperation: func(input, output any) string {
			if tk, ok := input.(Tick); ok {
				return "tick → " + tk.To.Format("15:04:05.000")
			}
			return fmt.Sprintf("%s → %v", s.describe(input.(In)), output)
		},
		DescribeState: func(st any) string {
			x := st.(state[S])
			return fmt.Sprintf("%+v at %s", x.s, x.now.Format("15:04:05.000"))
		},
	}
}

// canonical is a history with its times replaced by their ranks, so that
// two runs whose operations overlap in the same way share one verdict.
func canonical(ops []porcupine.Operation) string {
	var times []int64
	for _, op := range ops {
		times = append(times, op.Call, op.Return)
	}
	slices.Sort(times)
	times = slices.Compact(times)
	rank := func(t int64) int { i, _ := slices.BinarySearch(times, t); return i }
	var b strings.Builder
	for _, op := range ops {
		fmt.Fprintf(&b, "%d:%v:%v:%d:%d;", op.ClientId, op.Input, op.Output, rank(op.Call), rank(op.Return))
	}
	return b.String()
}

func describeHistory[T, In, Out, S any](ops []porcupine.Operation, spec Spec[T, In, Out, S]) string {
	sorted := slices.Clone(ops)
	slices.SortStableFunc(sorted, func(a, b porcupine.Operation) int { return int(a.Call - b.Call) })
	var b strings.Builder
	for _, op := range sorted {
		who := fmt.Sprintf("T%d", op.ClientId)
		in := fmt.Sprintf("%v", op.Input)
		if tk, ok := op.Input.(Tick); ok {
			fmt.Fprintf(&b, "    clock steps %d–%d: tick → %s\n", stepOf(op.Call), stepOf(op.Return), tk.To.Format("15:04:05.000"))
			continue
		} else if x, ok := op.Input.(In); ok {
			in = spec.describe(x)
		}
		if op.ClientId >= len(spec.Threads)+1 || (op.ClientId == len(spec.Threads) && (spec.Clock == nil || spec.Clock.Ticks == 0)) {
			who = "after"
		}
		if who == "after" {
			fmt.Fprintf(&b, "    %-5s after the threads: %s → %v\n", who, in, op.Output)
			continue
		}
		fmt.Fprintf(&b, "    %-5s steps %d–%d: %s → %v\n", who, stepOf(op.Call), stepOf(op.Return), in, op.Output)
	}
	return strings.TrimRight(b.String(), "\n")
}

// stepOf is the step of the trace (numbered from 1) that a history time
// stamps: the controller stamps step s's call 4s and its return 4s+1.
func stepOf(stamp int64) int64 { return stamp/4 + 1 }

func sanitize(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '/' || r == ' ' || r == ':' || r == '\\' {
			return '_'
		}
		return r
	}, s)
}
