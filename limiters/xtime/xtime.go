// Package xtime adapts golang.org/x/time/rate to the limiter campaign of
// package limiters (spec/limiters.md). The campaign compiles it once per
// released version of golang.org/x/time in a generated module; it uses
// only API present since v0.1.0 (NewLimiter, AllowN, Inf).
//
// A deterministic workload passes its clock readings to AllowN(t, n), so it
// replays exactly. A concurrent one reads the real clock the way Allow does
// (before the limiter's lock), as wall-clock time with the monotonic
// reading stripped so that the readings recorded replay to the same
// answers, and is checked for L4 against the library's own sequential
// behaviour: porcupine's Step restores a fresh Limiter to the state before
// the step and calls AllowN on it.
package xtime

import (
	"fmt"
	"math"
	"reflect"
	"runtime"
	"slices"
	"time"
	"unsafe"

	"github.com/anishathalye/porcupine"
	"golang.org/x/time/rate"

	"github.com/tollgate/tollgate/limiters"
	"github.com/tollgate/tollgate/linearizability"
)

// Adapter is golang.org/x/time/rate's adapter.
type Adapter struct{}

// Module implements limiters.Adapter.
func (Adapter) Module() string { return "golang.org/x/time" }

func limitOf(p limiters.Params) rate.Limit {
	if math.IsInf(p.Rate, 1) {
		return rate.Inf
	}
	return rate.Limit(p.Rate)
}

// RunSteps implements limiters.Adapter: one AllowN(origin+AtNs, Cost) per
// call step on a fresh NewLimiter(Rate, Burst).
func (Adapter) RunSteps(p limiters.Params, steps []limiters.Step) ([]limiters.Event, error) {
	origin, err := limiters.Origin(p.Origin)
	if err != nil {
		return nil, err
	}
	lim := rate.NewLimiter(limitOf(p), int(p.Burst))
	var evs []limiters.Event
	for i, s := range steps {
		if s.Op != "call" {
			continue
		}
		ok := lim.AllowN(origin.Add(time.Duration(s.AtNs)), int(s.Cost))
		evs = append(evs, limiters.Event{Step: i, Cost: s.Cost, LoNs: s.AtNs, HiNs: s.AtNs, OK: ok})
	}
	return evs, nil
}

// in and out are one concurrent call as the recorder sees it: the reading
// is taken inside the call, so it is part of the answer.
type in struct {
	N     int
	Yield bool
}

type out struct {
	AtNs int64
	OK   bool
}

// RunConcurrent implements limiters.Adapter: w.Clients goroutines on one
// limiter, each calling AllowN(now, 1) w.PerCli times, recorded by
// linearizability.Record and checked against the sequential model.
//
// When porcupine cannot decide a history within its budget (Unknown, which
// happens to about one history in ten on a loaded machine), a fresh one is
// recorded, up to attempts histories; the verdict is the first decided
// one's, and the detail says how many went Unknown before it.
func (a Adapter) RunConcurrent(w limiters.Workload, seed uint64, dir string) ([]limiters.Event, *limiters.Lin, error) {
	unknown := 0
	for {
		evs, lin, err := a.runConcurrent(w, seed, dir)
		if err != nil || lin.Result != string(linearizability.Unknown) || !slices.Contains(w.Props, limiters.PropLinearizes) || unknown+1 == attempts {
			if lin != nil && unknown > 0 {
				lin.Detail += fmt.Sprintf(" (after %d earlier histories porcupine could not decide within %v)", unknown, linTimeout)
			}
			return evs, lin, err
		}
		unknown++
	}
}

// attempts bounds the histories recorded for one L4 verdict.
const attempts = 3

func (Adapter) runConcurrent(w limiters.Workload, seed uint64, dir string) ([]limiters.Event, *limiters.Lin, error) {
	lim := rate.NewLimiter(limitOf(w.Params), int(w.Params.Burst))
	origin := time.Now().Round(0)
	scripts := make([][]in, w.Clients)
	for c := range scripts {
		for i := range w.PerCli {
			// The seed picks which calls yield between reading the clock
			// and taking the lock.
			y := w.Yield && mix(seed, uint64(c), uint64(i))%2 == 0
			scripts[c] = append(scripts[c], in{N: 1, Yield: y})
		}
	}
	backend := linearizability.Local(func(x in) out {
		t := time.Now().Round(0)
		if x.Yield {
			runtime.Gosched()
		}
		return out{AtNs: int64(t.Sub(origin)), OK: lim.AllowN(t, x.N)}
	})
	ops, err := linearizability.Record[in, out](scripts, backend)
	if err != nil {
		return nil, nil, err
	}
	evs := make([]limiters.Event, len(ops))
	for i, op := range ops {
		evs[i] = limiters.Event{Client: op.Client, Step: i, Cost: float64(op.Input.N), LoNs: op.Output.AtNs, HiNs: op.Output.AtNs, OK: op.Output.OK,
			CallSeq: op.Call, RetSeq: op.Return}
	}
	m := model(w.Params, origin)
	lin := &limiters.Lin{}
	budget := 5 * time.Second // only to find a replayable order
	if slices.Contains(w.Props, limiters.PropLinearizes) {
		budget = linTimeout
	}
	res, order := linearizability.Linearization(m, ops, budget)
	lin.Result = string(res)
	switch res {
	case linearizability.Ok:
		lin.Detail = fmt.Sprintf("porcupine: %d operations of %d goroutines linearize against x/time/rate's own sequential AllowN", len(ops), w.Clients)
		for _, i := range order {
			lin.Steps = append(lin.Steps, limiters.Step{Op: "call", AtNs: ops[i].Output.AtNs, Cost: float64(ops[i].Input.N)})
			e := evs[i]
			e.Step, e.CallSeq, e.RetSeq = len(lin.Events), 0, 0 // in linearization order
			lin.Events = append(lin.Events, e)
		}
	case linearizability.Illegal:
		rep, err := linearizability.CheckOps("x/time/rate", "L4", m, ops, ops, linearizability.Options{Timeout: budget, Dir: dir, Name: fmt.Sprintf("x-time-%s-%s-L4", w.Name, limiters.LinkedVersion("golang.org/x/time"))})
		if err != nil {
			return nil, nil, err
		}
		lin.Detail, lin.HTML = rep.Detail, rep.HTMLPath
	default:
		lin.Detail = fmt.Sprintf("porcupine: no verdict on %d operations within %v (not a pass)", len(ops), budget)
	}
	// Replayed from the recorded readings, the steps are relative to the
	// same origin; the concurrent run's origin is not a named one, so the
	// steps carry offsets from the default origin instead, which changes
	// nothing (only differences of readings matter to AllowN).
	return evs, lin, nil
}

func mix(a, b, c uint64) uint64 {
	x := a*0x9e3779b97f4a7c15 ^ b*0xbf58476d1ce4e5b9 ^ c*0x94d049bb133111eb
	x ^= x >> 31
	x *= 0xd6e8feb86d2b5d3f
	return x ^ x>>29
}

// state is a Limiter's fields, read and written through reflect (they are
// unexported; their names and types have not changed since v0.1.0, and
// fields checks both before touching them).
type state struct {
	Limit     float64
	Burst     int
	Tokens    float64
	Last      time.Time
	LastEvent time.Time
}

type fieldPtrs struct {
	limit     *rate.Limit
	burst     *int
	tokens    *float64
	last      *time.Time
	lastEvent *time.Time
}

func fields(l *rate.Limiter) fieldPtrs {
	v := reflect.ValueOf(l).Elem()
	ptr := func(name string, want reflect.Type) unsafe.Pointer {
		f := v.FieldByName(name)
		if !f.IsValid() || f.Type() != want {
			panic(fmt.Sprintf("xtime: rate.Limiter has no field %s of type %v", name, want))
		}
		return unsafe.Pointer(f.UnsafeAddr())
	}
	return fieldPtrs{
		limit:     (*rate.Limit)(ptr("limit", reflect.TypeFor[rate.Limit]())),
		burst:     (*int)(ptr("burst", reflect.TypeFor[int]())),
		tokens:    (*float64)(ptr("tokens", reflect.TypeFor[float64]())),
		last:      (*time.Time)(ptr("last", reflect.TypeFor[time.Time]())),
		lastEvent: (*time.Time)(ptr("lastEvent", reflect.TypeFor[time.Time]())),
	}
}

func snapshot(l *rate.Limiter) state {
	f := fields(l)
	return state{Limit: float64(*f.limit), Burst: *f.burst, Tokens: *f.tokens, Last: *f.last, LastEvent: *f.lastEvent}
}

func restore(s state) *rate.Limiter {
	l := rate.NewLimiter(rate.Limit(s.Limit), s.Burst)
	f := fields(l)
	*f.tokens, *f.last, *f.lastEvent = s.Tokens, s.Last, s.LastEvent
	return l
}

func model(p limiters.Params, origin time.Time) porcupine.Model {
	return porcupine.Model{
		Init: func() any { return snapshot(rate.NewLimiter(limitOf(p), int(p.Burst))) },
		Step: func(st, input, output any) (bool, any) {
			l := restore(st.(state))
			x, o := input.(in), output.(out)
			ok := l.AllowN(origin.Add(time.Duration(o.AtNs)), x.N)
			return ok == o.OK, snapshot(l)
		},
		// Hash keeps porcupine's cache buckets small: without it every
		// state reached with the same set of operations shares one bucket
		// and each lookup compares against all of them.
		Hash: func(st any) uint64 {
			s := st.(state)
			h := math.Float64bits(s.Tokens)*0x9e3779b97f4a7c15 ^ uint64(s.Last.UnixNano())*0xbf58476d1ce4e5b9
			h ^= uint64(s.LastEvent.UnixNano())*0x94d049bb133111eb ^ uint64(s.Burst)
			return h ^ h>>31
		},
		Equal: func(a, b any) bool {
			x, y := a.(state), b.(state)
			return x.Limit == y.Limit && x.Burst == y.Burst && x.Tokens == y.Tokens && x.Last.Equal(y.Last) && x.LastEvent.Equal(y.LastEvent)
		},
		DescribeOperation: func(input, output any) string {
			o := output.(out)
			return fmt.Sprintf("AllowN(+%dns, %d) → %v", o.AtNs, input.(in).N, o.OK)
		},
		DescribeState: func(st any) string {
			s := st.(state)
			return fmt.Sprintf("tokens=%v last=+%v", s.Tokens, s.Last.Sub(origin))
		},
	}
}

// linTimeout is porcupine's budget for one concurrent history; past it the
// L4 verdict is Unknown (never a pass).
const linTimeout = 30 * time.Second
