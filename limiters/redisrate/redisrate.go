// Package redisrate adapts github.com/go-redis/redis_rate/v10 (GCRA in a
// Lua script on a real redis-server) to the limiter campaign of package
// limiters. The script reads the server's clock (TIME, microseconds), so no
// clock can be injected: every call's reading is known only to lie between
// the client's wall clock just before the call and just after the answer
// (same machine, same clock), and the properties count it with that
// uncertainty (spec/limiters.md). The server is named by
// TOLLGATE_REDIS_ADDR; each workload uses a key of its own.
package redisrate

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/redis/go-redis/v9"

	"github.com/tollgate/tollgate/limiters"
)

// Adapter is redis_rate/v10's adapter.
type Adapter struct{}

// Module implements limiters.Adapter.
func (Adapter) Module() string { return "github.com/go-redis/redis_rate/v10" }

func client() (*redis.Client, error) {
	addr := os.Getenv("TOLLGATE_REDIS_ADDR")
	if addr == "" {
		return nil, errors.New("redisrate: TOLLGATE_REDIS_ADDR must name a redis-server (tollgate limiters starts one)")
	}
	return redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1}), nil
}

// limit turns Params into a redis_rate.Limit: Rate calls per Period with
// Burst. Params.Rate is per second; a rate under 1/s is expressed as one
// call per a longer period.
func limit(p limiters.Params) redis_rate.Limit {
	l := redis_rate.Limit{Rate: int(p.Rate), Burst: int(p.Burst), Period: time.Second}
	if p.Rate > 0 && p.Rate < 1 {
		l.Rate, l.Period = 1, time.Duration(float64(time.Second)/p.Rate)
	}
	return l
}

var keys struct {
	sync.Mutex
	n int
}

func freshKey(name string) string {
	keys.Lock()
	defer keys.Unlock()
	keys.n++
	return fmt.Sprintf("tollgate:%s:%d:%d", name, os.Getpid(), keys.n)
}

// call makes one AllowN and brackets it with the wall clock.
func call(ctx context.Context, l *redis_rate.Limiter, key string, lim redis_rate.Limit, cost int, origin time.Time) (limiters.Event, error) {
	lo := time.Now()
	res, err := l.AllowN(ctx, key, lim, cost)
	hi := time.Now()
	if err != nil {
		return limiters.Event{}, err
	}
	return limiters.Event{Cost: float64(cost), LoNs: int64(lo.Sub(origin)), HiNs: int64(hi.Sub(origin)), OK: res.Allowed > 0}, nil
}

// RunSteps implements limiters.Adapter on the server's clock: a call step
// is one AllowN, an idle step sleeps. Runs are therefore not exactly
// repeatable (the server's clock is the real one): a counterexample is
// re-checked as recorded.
func (Adapter) RunSteps(p limiters.Params, steps []limiters.Step) ([]limiters.Event, error) {
	rdb, err := client()
	if err != nil {
		return nil, err
	}
	defer rdb.Close()
	ctx := context.Background()
	l := redis_rate.NewLimiter(rdb)
	key, lim := freshKey("seq"), limit(p)
	origin := time.Now()
	var evs []limiters.Event
	for i, s := range steps {
		switch s.Op {
		case "idle":
			time.Sleep(time.Duration(s.Idle))
		case "call":
			e, err := call(ctx, l, key, lim, int(s.Cost), origin)
			if err != nil {
				return nil, err
			}
			e.Step = i
			evs = append(evs, e)
		}
	}
	return evs, nil
}

// RunConcurrent implements limiters.Adapter: w.Clients goroutines, each
// with its own connection pool share, call AllowN(1) w.PerCli times on one
// key. No L4: the server's clock leaves no deterministic sequential model.
func (Adapter) RunConcurrent(w limiters.Workload, _ uint64, _ string) ([]limiters.Event, *limiters.Lin, error) {
	rdb, err := client()
	if err != nil {
		return nil, nil, err
	}
	defer rdb.Close()
	ctx := context.Background()
	l := redis_rate.NewLimiter(rdb)
	key, lim := freshKey(w.Name), limit(w.Params)
	origin := time.Now()
	var stamps atomic.Int64 // the calls' order, as linearizability.Stamps
	per := make([][]limiters.Event, w.Clients)
	errs := make([]error, w.Clients)
	var wg sync.WaitGroup
	for c := range w.Clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range w.PerCli {
				callSeq := stamps.Add(1)
				e, err := call(ctx, l, key, lim, 1, origin)
				retSeq := stamps.Add(1)
				if err != nil {
					errs[c] = err
					return
				}
				e.Client, e.CallSeq, e.RetSeq = c, callSeq, retSeq
				per[c] = append(per[c], e)
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, nil, err
	}
	var evs []limiters.Event
	for _, e := range per {
		evs = append(evs, e...)
	}
	for i := range evs {
		evs[i].Step = i
	}
	return evs, nil, nil
}

func calls(n int, cost float64, every time.Duration) []limiters.Step {
	var s []limiters.Step
	for range n {
		s = append(s, limiters.Step{Op: "call", Cost: cost})
		if every > 0 {
			s = append(s, limiters.Step{Op: "idle", Idle: int64(every)})
		}
	}
	return s
}

// Workloads implements limiters.Adapter.
func (Adapter) Workloads(quick bool) []limiters.Workload {
	p := func(b, r float64) limiters.Params {
		return limiters.Params{Burst: b, Rate: r, ResolutionNs: 1000}
	}
	both := []string{limiters.PropBound, limiters.PropRefusal}
	clients, per := 8, 150
	if quick {
		clients, per = 4, 100
	}
	return []limiters.Workload{
		{Name: "steady", Hunts: "control: calls as fast as one client makes them", Params: p(10, 100), Steps: calls(300, 1, 0), Props: both},
		{Name: "idle-burst", Hunts: "idle past the burst window, then a burst", Params: p(5, 10),
			Steps: slices.Concat(calls(20, 1, 0), calls(1, 1, 1200*time.Millisecond), calls(50, 1, 0)), Props: both},
		{Name: "thirds", Hunts: "float emission interval 1/3 s, burst 7, cost 5 (the seed's rounding case)", Params: p(7, 3),
			Steps: calls(30, 5, 100*time.Millisecond), Props: both},
		{Name: "tiny-rate", Hunts: "rate 1e-9/s (one call per 1e9 s)", Params: p(5, 1e-9), Steps: calls(50, 1, 0), Props: both},
		{Name: "huge-rate", Hunts: "rate 1e9/s, burst 1", Params: p(1, 1e9), Steps: calls(300, 1, 0), Props: both},
		{Name: "zero-rate", Hunts: "rate 0: only the burst, ever", Params: p(3, 0), Steps: calls(50, 1, 0), Props: both},
		{Name: "contended", Hunts: "many goroutines on one key, real clock", Params: p(10, 1000),
			Clients: clients, PerCli: per, Props: []string{limiters.PropBound}},
	}
}
