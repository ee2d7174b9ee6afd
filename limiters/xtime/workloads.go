package xtime

import (
	"math"
	"slices"
	"time"

	"github.com/tollgate/tollgate/limiters"
)

const ms = int64(time.Millisecond)

// calls returns n call steps of cost, the k-th at start + k·every.
func calls(n int, start, every int64, cost float64) []limiters.Step {
	s := make([]limiters.Step, n)
	for k := range s {
		s[k] = limiters.Step{Op: "call", AtNs: start + int64(k)*every, Cost: cost}
	}
	return s
}

// alternate returns n calls of cost whose readings alternate a, b, a, b…
func alternate(n int, a, b int64, cost float64) []limiters.Step {
	s := make([]limiters.Step, n)
	for k := range s {
		at := a
		if k%2 == 1 {
			at = b
		}
		s[k] = limiters.Step{Op: "call", AtNs: at, Cost: cost}
	}
	return s
}

var both = []string{limiters.PropBound, limiters.PropRefusal}

// Workloads implements limiters.Adapter. Every deterministic workload passes
// its readings to AllowN; the concurrent ones read the real clock.
func (Adapter) Workloads(quick bool) []limiters.Workload {
	p := func(b, r float64, origin string) limiters.Params {
		return limiters.Params{Burst: b, Rate: r, Origin: origin, ResolutionNs: 1}
	}
	clients, per, linPer := 8, 250, 100
	if quick {
		clients, per, linPer = 4, 200, 60
	}
	return []limiters.Workload{
		{Name: "steady", Hunts: "control: calls at 5x the rate", Params: p(10, 100, ""),
			Steps: calls(400, 0, 2*ms, 1), Props: both},
		{Name: "idle-burst", Hunts: "idle far past the burst window, then a burst", Params: p(5, 10, ""),
			Steps: slices.Concat(calls(20, 0, ms, 1), calls(50, 10_000*ms, 0, 1), calls(50, 10_000*ms, 10*ms, 1)), Props: both},
		{Name: "stale-alternate", Hunts: "a clock that moves backwards: readings 1000 ms, 0 ms, … (golang/go#56287)",
			Params: p(10, 10, ""), Steps: alternate(200, 1000*ms, 0, 1), Props: both},
		{Name: "stale-refused", Hunts: "a stale reading on a refused call moves the stored time back",
			Params: p(1, 1, ""), Steps: slices.Concat(calls(1, 1000*ms, 0, 1), alternate(100, 0, 1000*ms, 1)), Props: both},
		{Name: "tiny-rate", Hunts: "rate 1e-10/s: the wait overflows time.Duration (golang/go#71154)",
			Params: p(10, 1e-10, ""), Steps: slices.Concat(calls(20, 0, 1000*ms, 1), calls(20, 20_000*ms, 1000*ms, 10)), Props: both},
		{Name: "huge-rate", Hunts: "rate 1e10/s, burst 1, calls 1 ns apart", Params: p(1, 1e10, ""),
			Steps: calls(1000, 0, 1, 1), Props: both},
		{Name: "huge-burst", Hunts: "burst 1e10, costs of 1e9, rate 1e10/s", Params: p(1e10, 1e10, ""),
			Steps: calls(200, 0, 50*ms, 1e9), Props: both},
		{Name: "zero-limit", Hunts: "rate 0: only the burst, ever", Params: p(3, 0, ""),
			Steps: calls(20, 0, 1000*ms, 1), Props: both},
		{Name: "inf-limit", Hunts: "rate Inf, burst 0: every call allowed", Params: p(0, math.Inf(1), ""),
			Steps: calls(20, 0, ms, 1), Props: both},
		{Name: "unix-epoch", Hunts: "an injected clock starting at the Unix epoch", Params: p(5, 10, "unix-epoch"),
			Steps: calls(100, 0, 20*ms, 1), Props: both},
		{Name: "zero-time", Hunts: "an injected clock starting at time.Time{} (year 1)", Params: p(5, 10, "zero-time"),
			Steps: calls(100, 0, 20*ms, 1), Props: both},
		{Name: "negative", Hunts: "an injected clock starting at a negative Unix time (1901)", Params: p(5, 10, "negative"),
			Steps: calls(100, 0, 20*ms, 1), Props: both},
		{Name: "before-zero", Hunts: "an injected clock starting before time.Time{}", Params: p(5, 10, "before-zero"),
			Steps: calls(100, 0, 20*ms, 1), Props: both},
		{Name: "contended", Hunts: "many goroutines on one limiter, real clock, read before the lock (golang/go#71360)",
			Params: p(10, 1e5, ""), Clients: clients, PerCli: per, Yield: true, Props: []string{limiters.PropBound}},
		{Name: "contended-allow", Hunts: "many goroutines on one limiter, real clock, as Allow() calls it",
			Params: p(10, 1e5, ""), Clients: clients, PerCli: per, Props: []string{limiters.PropBound}},
		{Name: "contended-lin", Hunts: "linearizability against the library's own sequential AllowN (a short history porcupine can decide)",
			Params: p(10, 1e5, ""), Clients: 4, PerCli: linPer, Yield: true,
			Props: []string{limiters.PropBound, limiters.PropLinearizes}},
	}
}
