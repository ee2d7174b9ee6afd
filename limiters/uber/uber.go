// Package uber adapts go.uber.org/ratelimit, a pacer (Take sleeps instead of
// refusing), to the limiter campaign of package limiters
// (spec/limiters.md, L3). It uses only API present in every version the
// module proxy serves (v0.2.0 on): New, WithClock, WithSlack, WithoutSlack.
//
// A deterministic workload runs on an injected clock: each reading moves it
// forward by Params.TickNs (a negative TickNs, concurrent workloads only:
// a frozen clock that never moves, for L4), Sleep moves it by the time slept, an idle step
// by the idle time, so a run is a function of its steps. A concurrent one
// uses the library's default (real) clock. The time a call returned is the
// time Take reports.
package uber

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/anishathalye/porcupine"
	"go.uber.org/ratelimit"

	"github.com/tollgate/tollgate/limiters"
	"github.com/tollgate/tollgate/linearizability"
)

// Adapter is go.uber.org/ratelimit's adapter.
type Adapter struct{}

// Module implements limiters.Adapter.
func (Adapter) Module() string { return "go.uber.org/ratelimit" }

// clock is the injected clock of a deterministic run. Only one goroutine
// uses it.
type clock struct {
	now  time.Time
	tick time.Duration
}

func (c *clock) Now() time.Time {
	t := c.now
	c.now = c.now.Add(c.tick)
	return t
}

func (c *clock) Sleep(d time.Duration) {
	if d > 0 {
		c.now = c.now.Add(d)
	}
}

func options(p limiters.Params) []ratelimit.Option {
	if p.Slack == 0 {
		return []ratelimit.Option{ratelimit.WithoutSlack}
	}
	return []ratelimit.Option{ratelimit.WithSlack(p.Slack)}
}

// RunSteps implements limiters.Adapter.
func (Adapter) RunSteps(p limiters.Params, steps []limiters.Step) ([]limiters.Event, error) {
	origin, err := limiters.Origin(p.Origin)
	if err != nil {
		return nil, err
	}
	c := &clock{now: origin, tick: time.Duration(p.TickNs)}
	lim := ratelimit.New(int(p.Rate), append(options(p), ratelimit.WithClock(c))...)
	var evs []limiters.Event
	for i, s := range steps {
		switch s.Op {
		case "idle":
			c.now = c.now.Add(time.Duration(s.Idle))
		case "call":
			at := int64(c.now.Sub(origin))
			ret := lim.Take()
			evs = append(evs, limiters.Event{Step: i, Cost: 1, LoNs: at, HiNs: int64(c.now.Sub(origin)), OK: true, RetNs: int64(ret.Sub(origin))})
		}
	}
	return evs, nil
}

// frozen is a clock that always reads the same instant and never sleeps:
// Take's answers then depend only on how many Takes came before, which
// makes the sequential behaviour a function of the count (L4). Safe for
// concurrent use (it has no state).
type frozen struct{ at time.Time }

func (c frozen) Now() time.Time    { return c.at }
func (frozen) Sleep(time.Duration) {}

// runFrozen runs w.Clients goroutines of w.PerCli Takes on a frozen clock,
// recorded by linearizability.Record, and checks the history with
// porcupine against the same version run on one goroutine: the k-th Take
// of any linearization must answer what the k-th sequential Take answers.
func runFrozen(w limiters.Workload, dir string) ([]limiters.Event, *limiters.Lin, error) {
	origin, err := limiters.Origin(w.Params.Origin)
	if err != nil {
		return nil, nil, err
	}
	clk := frozen{at: origin}
	total := w.Clients * w.PerCli
	seqLim := ratelimit.New(int(w.Params.Rate), append(options(w.Params), ratelimit.WithClock(clk))...)
	seq := make([]int64, total)
	for k := range seq {
		seq[k] = int64(seqLim.Take().Sub(origin))
	}
	lim := ratelimit.New(int(w.Params.Rate), append(options(w.Params), ratelimit.WithClock(clk))...)
	scripts := make([][]struct{}, w.Clients)
	for c := range scripts {
		scripts[c] = make([]struct{}, w.PerCli)
	}
	ops, err := linearizability.Record[struct{}, int64](scripts, linearizability.Local(func(struct{}) int64 {
		return int64(lim.Take().Sub(origin))
	}))
	if err != nil {
		return nil, nil, err
	}
	evs := make([]limiters.Event, len(ops))
	for i, op := range ops {
		evs[i] = limiters.Event{Client: op.Client, Step: i, Cost: 1, OK: true, RetNs: op.Output, CallSeq: op.Call, RetSeq: op.Return}
	}
	m := porcupine.Model{
		Init: func() any { return 0 },
		Step: func(state, _, output any) (bool, any) {
			k := state.(int)
			return k < len(seq) && output.(int64) == seq[k], k + 1
		},
		Equal:             func(a, b any) bool { return a.(int) == b.(int) },
		DescribeOperation: func(_, output any) string { return fmt.Sprintf("Take() → +%dns", output.(int64)) },
		DescribeState:     func(state any) string { return fmt.Sprintf("%d takes", state.(int)) },
	}
	name := fmt.Sprintf("ratelimit-%s-%s-L4", w.Name, limiters.LinkedVersion("go.uber.org/ratelimit"))
	rep, err := linearizability.CheckOps("go.uber.org/ratelimit", "L4", m, ops, ops, linearizability.Options{Timeout: 30 * time.Second, Dir: dir, Name: name})
	if err != nil {
		return nil, nil, err
	}
	lin := &limiters.Lin{Result: string(rep.Result), Detail: rep.Detail, HTML: rep.HTMLPath}
	if rep.Result == linearizability.Ok {
		lin.Detail = fmt.Sprintf("porcupine: %d Takes of %d goroutines on a frozen clock linearize against %d sequential Takes", len(ops), w.Clients, total)
	}
	return evs, lin, nil
}

// RunConcurrent implements limiters.Adapter: on a frozen clock (w.Params.TickNs
// < 0), see runFrozen; otherwise w.Clients goroutines call Take
// w.PerCli times each on the real clock; with w.IdleMs, every goroutine
// makes half its calls, all wait until the limiter has been idle that
// long, then make the rest. The seed sets a jitter of up to 50 µs before
// each goroutine's calls. No L4: the real clock has no sequential model.
func (Adapter) RunConcurrent(w limiters.Workload, seed uint64, dir string) ([]limiters.Event, *limiters.Lin, error) {
	if w.Params.TickNs < 0 {
		return runFrozen(w, dir)
	}
	lim := ratelimit.New(int(w.Params.Rate), options(w.Params)...)
	origin := time.Now()
	per := make([][]limiters.Event, w.Clients)
	var half, done sync.WaitGroup
	half.Add(w.Clients)
	release := make(chan struct{})
	for c := range w.Clients {
		done.Add(1)
		go func() {
			defer done.Done()
			r := rand.New(rand.NewPCG(seed, uint64(c)))
			for i := range w.PerCli {
				if w.IdleMs > 0 && i == w.PerCli/2 {
					half.Done()
					<-release
				}
				if d := r.IntN(50_000); d > 40_000 {
					time.Sleep(time.Duration(d-40_000) * time.Nanosecond)
				}
				at := time.Since(origin)
				ret := lim.Take()
				per[c] = append(per[c], limiters.Event{Client: c, Cost: 1, LoNs: int64(at), HiNs: int64(time.Since(origin)), OK: true, RetNs: int64(ret.Sub(origin))})
			}
			if w.IdleMs > 0 && w.PerCli < 2 {
				half.Done()
			}
		}()
	}
	if w.IdleMs > 0 {
		half.Wait()
		time.Sleep(time.Duration(w.IdleMs) * time.Millisecond)
		close(release)
	}
	done.Wait()
	var evs []limiters.Event
	for _, e := range per {
		evs = append(evs, e...)
	}
	for i := range evs {
		evs[i].Step = i
	}
	return evs, nil, nil
}

const ms = int64(time.Millisecond)

func takes(n int) []limiters.Step {
	s := make([]limiters.Step, n)
	for i := range s {
		s[i] = limiters.Step{Op: "call"}
	}
	return s
}

func idle(ns int64) []limiters.Step { return []limiters.Step{{Op: "idle", Idle: ns}} }

// Workloads implements limiters.Adapter.
func (Adapter) Workloads(quick bool) []limiters.Workload {
	p := func(rate float64, slack int, origin string, tick int64) limiters.Params {
		return limiters.Params{Rate: rate, Slack: slack, Origin: origin, TickNs: tick, ResolutionNs: 1}
	}
	pacer := []string{limiters.PropPacer}
	clients, per := 8, 100
	if quick {
		clients, per = 4, 60
	}
	return []limiters.Workload{
		{Name: "steady", Hunts: "control: back-to-back takes", Params: p(100, 10, "", 1000), Steps: takes(300), Props: pacer},
		{Name: "idle-burst", Hunts: "idle far past the slack window, then a burst (uber-go/ratelimit #119, #124)",
			Params: p(100, 10, "", 1000), Steps: slices.Concat(takes(20), idle(2000*ms), takes(300)), Props: pacer},
		{Name: "idle-just-past-slack", Hunts: "idle just longer than slack·per, then a burst",
			Params: p(100, 10, "", 1000), Steps: slices.Concat(takes(20), idle(105*ms), takes(300)), Props: pacer},
		{Name: "idle-burst-noslack", Hunts: "WithoutSlack: idle, then a burst",
			Params: p(100, 0, "", 1000), Steps: slices.Concat(takes(20), idle(2000*ms), takes(300)), Props: pacer},
		{Name: "huge-rate", Hunts: "rate 1e9/s: one nanosecond per take", Params: p(1e9, 10, "", 1),
			Steps: slices.Concat(takes(100), idle(1000), takes(1000)), Props: pacer},
		{Name: "rate-1e10", Hunts: "rate 1e10/s: the per-take interval rounds to 0 ns", Params: p(1e10, 10, "", 1),
			Steps: takes(1000), Props: pacer},
		{Name: "zero-rate", Hunts: "rate 0", Params: p(0, 10, "", 1000), Steps: takes(10), Props: pacer},
		{Name: "unix-epoch-frozen", Hunts: "an injected clock at the Unix epoch that moves only when the limiter sleeps (a mock clock's default)",
			Params: p(100, 10, "unix-epoch", 0), Steps: takes(200), Props: pacer},
		{Name: "unix-epoch", Hunts: "an injected clock starting at the Unix epoch", Params: p(100, 10, "unix-epoch", 1000),
			Steps: takes(200), Props: pacer},
		{Name: "zero-time", Hunts: "an injected clock starting at time.Time{}", Params: p(100, 10, "zero-time", 1000),
			Steps: takes(200), Props: pacer},
		{Name: "negative", Hunts: "an injected clock starting at a negative Unix time (1901)", Params: p(100, 10, "negative", 1000),
			Steps: takes(200), Props: pacer},
		{Name: "contended", Hunts: "many goroutines, real clock", Params: p(5000, 10, "", 0),
			Clients: clients, PerCli: per, Props: pacer},
		{Name: "contended-frozen", Hunts: "many goroutines on a frozen injected clock: the CAS hands out each slot once (L4 against the version's own sequential Takes)",
			Params: p(100, 10, "", -1), Clients: clients, PerCli: per, Props: []string{limiters.PropPacer, limiters.PropLinearizes}},
		{Name: "contended-idle-burst", Hunts: "many goroutines, real clock, idle 300 ms between two bursts (#119)",
			Params: p(5000, 10, "", 0), Clients: clients, PerCli: per, IdleMs: 300, Props: pacer},
	}
}
