package conform

import (
	"encoding/json"
	"math"

	"github.com/tollgate/tollgate/model"
)

// The scripts of the golden vectors: requests only. Every expected answer is
// computed by the model (GenerateVectors); nothing here states a result.
// Names start with the invariant they exercise; covers lists every ID a case
// checks. Each case runs on its own table with its own clients.

type script struct {
	name   string
	covers []string
	note   string
	steps  []Request
}

func scripts(prim string) []script {
	if prim == PrimTokenBucket {
		return tbScripts()
	}
	return crScripts()
}

// Token-bucket request builders.

func take(key string, capacity, rate, cost float64, now int64) Request {
	return Request{Op: OpTake, Key: I(key), Capacity: F(capacity), RefillPerSecond: F(rate), Cost: F(cost), NowMs: I(now)}
}

func reclaim(capacity, rate float64, now int64) Request {
	return Request{Op: OpReclaim, Capacity: F(capacity), RefillPerSecond: F(rate), NowMs: I(now)}
}

func take1(key string, capacity, rate float64, now int64) Request { // cost omitted: defaults to 1
	return Request{Op: OpTake, Key: I(key), Capacity: F(capacity), RefillPerSecond: F(rate), NowMs: I(now)}
}

func peek(key string, capacity, rate float64, now int64) Request {
	return Request{Op: OpPeek, Key: I(key), Capacity: F(capacity), RefillPerSecond: F(rate), NowMs: I(now)}
}

func retry(key string, capacity, rate, cost float64, now int64) Request {
	return Request{Op: OpRetryAfter, Key: I(key), Capacity: F(capacity), RefillPerSecond: F(rate), Cost: F(cost), NowMs: I(now)}
}

func reset(key string) Request { return Request{Op: OpReset, Key: I(key)} }

func resetAll() Request { return Request{Op: OpResetAll} }

func tbScripts() []script {
	nan, inf := math.NaN(), math.Inf(1)
	negZero := math.Copysign(0, -1)
	var out []script
	add := func(name string, covers []string, note string, steps ...Request) {
		out = append(out, script{name, covers, note, steps})
	}

	add("T1/fresh-bucket-first-take", []string{"T1", "T8"},
		"an unseen key starts full; the first take leaves capacity - cost; cost defaults to 1",
		take1("k", 10, 1, 0), take("k", 10, 1, 2.5, 0), take("k", 10, 1, 6.5, 0), take1("k", 10, 1, 0))
	add("T1/refill-then-take", []string{"T1", "T3"},
		"tokens accrue as elapsed/1000*rate; fractional tokens survive",
		take("k", 10, 3, 10, 0), peek("k", 10, 3, 1), peek("k", 10, 3, 333), take1("k", 10, 3, 333),
		take1("k", 10, 3, 334), take("k", 10, 3, 0.25, 500), peek("k", 10, 3, 10_000))
	add("T2/refusal-changes-nothing", []string{"T2"},
		"a take is refused only when refilled < cost, and the refusal writes neither tokens nor timestamp: "+
			"the peek after the refusal adds up the whole interval since the last commit; a port that stores the "+
			"refilled value on refusal adds two shorter intervals and rounds to other bits here",
		refusalSteps()...)
	add("T2/exact-cover-admits", []string{"T2", "T1"},
		"refilled == cost is admitted (>=, not >)",
		take("k", 4, 2, 4, 0), take("k", 4, 2, 1, 500), take("k", 4, 2, 1, 999), take("k", 4, 2, 1, 1000))
	add("T3/float-of-elapsed-rounds", []string{"T3"},
		"elapsed is computed exactly as an integer and then rounded to binary64 once: here last = 1 and "+
			"now = 2^53+1, so elapsed = 2^53 exactly; a port that subtracts two doubles gets 2^53-1",
		elapsedSteps()...)
	add("T3/extreme-clocks", []string{"T3", "T4"},
		"elapsed from the smallest to the largest int64 is 2^64-1, computed exactly as an unsigned 64-bit integer",
		take("k", 100, 1e-18, 100, math.MinInt64), peek("k", 100, 1e-18, math.MaxInt64),
		take("k", 100, 1e-18, 0.01, math.MaxInt64), take("k", 100, 1e-18, 0.01, math.MaxInt64))
	add("T3/accrual-overflows-to-capacity", []string{"T3"},
		"accrued may be +Inf (or tokens + accrued may overflow); refilled is then capacity. Erlang raises on "+
			"float overflow instead of returning +Inf, so a port must handle it",
		take("k", 1.7976931348623157e308, 1.7976931348623157e308, 1.7976931348623157e308, 0),
		peek("k", 1.7976931348623157e308, 1.7976931348623157e308, 2000),
		take("k", 1.7976931348623157e308, 1.7976931348623157e308, 1e308, 5000),
		peek("k", 1.7976931348623157e308, 1.7976931348623157e308, 5001))
	add("T3/product-rounded-before-sum", []string{"T3"},
		"(elapsed/1000)*rate is rounded before tokens are added; a fused multiply-add gives other bits here",
		fmaSteps()...)
	add("T4/stale-clock-does-not-move-last", []string{"T4"},
		"seed departure: a take with an older clock accrues nothing and leaves last at the newest clock; "+
			"the seed stores the older clock and the next take is credited the interval twice",
		take("k", 10, 10, 5, 1000), take1("k", 10, 10, 0), take1("k", 10, 10, 1000), peek("k", 10, 10, 1000),
		peek("k", 10, 10, 1100))
	out = append(out, script{"T5/alternating-clock-bound", []string{"T5", "T4"},
		"seed departure: takes alternating between clocks 1000 and 0 at capacity 10, 10 tokens/s: T5 allows " +
			"at most 20 admissions; the seed's stored timestamp admits every one", alternating()})
	add("T6/peek-reads-only", []string{"T6"},
		"an unseen key peeks capacity and peek never creates a bucket: a take after a peek starts full; "+
			"cost is not an argument of peek",
		peek("k", 5, 1, 100), take("k", 5, 1, 5, 0), peek("k", 5, 1, 0), peek("k", 5, 1, 100),
		Request{Op: OpPeek, Key: I("k"), Capacity: F(5), RefillPerSecond: F(1), Cost: F(100), NowMs: I(int64(200))},
		peek("k", 5, 1, 100), take("k", 5, 1, 0.1, 100))
	add("T7/retry-after-exact-not-closed-form", []string{"T7"},
		"seed departure: the closed form ceil((cost - refilled) / rate * 1000) is one millisecond short here "+
			"because of rounding; the answer is the smallest wait after which the take succeeds. The third "+
			"request is the take at the closed-form wait (refused), the fourth at the exact wait",
		seedCeilSteps()...)
	add("T7/retry-after-zero-and-one", []string{"T7"},
		"0 when the bucket covers the cost now; otherwise at least 1, and take(now + w - 1) fails",
		retry("k", 2, 1000, 2, 0), take("k", 2, 1000, 2, 0), retry("k", 2, 1000, 1, 0), take1("k", 2, 1000, 0),
		take1("k", 2, 1000, 1), retry("k", 2, 1000, 0.5, 1), retry("k", 2, 1000, 2, 1))
	add("T7/retry-after-never", []string{"T7"},
		"a rate so small that no clock up to 2^63-1 refills the cost answers 2^63-1",
		take("k", 1, 5e-324, 1, 0), retry("k", 1, 5e-324, 1, 0), retry("k", 1, 5e-324, 1, math.MaxInt64-5),
		retry("k", 1, 5e-324, 1, math.MinInt64))
	add("T7/retry-after-stale-clock", []string{"T7", "T4"},
		"retry_after from a clock older than last waits from last",
		take("k", 10, 10, 10, 5000), retry("k", 10, 10, 1, 4000), retry("k", 10, 10, 1, 5000))
	add("T8/limits-per-call-clamp", []string{"T8"},
		"limits come with every call; a smaller capacity clamps what that call sees, and the stored value when a "+
			"take commits; a larger one later lets the bucket grow again",
		take("k", 10, 1, 1, 0), peek("k", 5, 1, 0), take("k", 5, 1, 1, 0), peek("k", 10, 1, 0),
		peek("k", 10, 1, 6000), take("k", 10, 100, 1, 6000))
	add("T8/keys-independent-and-opaque", []string{"T8"},
		"keys are opaque strings: ones that look like ETS match-spec variables or wildcards must not touch "+
			"other buckets",
		take("a", 3, 1, 3, 0), take(":_", 3, 1, 1, 0), take("_", 3, 1, 2, 0), take("$1", 3, 1, 0.5, 0),
		take("'$1'", 3, 1, 1.5, 0), take("", 3, 1, 2.5, 0), take("ключ", 3, 1, 3, 0), take("{:const, 1}", 3, 1, 0.75, 0),
		peek("a", 3, 1, 0), peek(":_", 3, 1, 0), peek("_", 3, 1, 0), peek("$1", 3, 1, 0), peek("'$1'", 3, 1, 0),
		peek("", 3, 1, 0), peek("ключ", 3, 1, 0), peek("{:const, 1}", 3, 1, 0), peek("b", 3, 1, 0),
		reset(":_"), peek("a", 3, 1, 0), peek(":_", 3, 1, 0), peek("$1", 3, 1, 0))
	add("T9/invalid-capacity", []string{"T9"},
		"capacity must be finite and > 0: 0, -0, negatives, NaN and ±Infinity are refused and nothing is stored",
		take1("k", 0, 1, 0), take1("k", negZero, 1, 0), take1("k", -1, 1, 0), take1("k", nan, 1, 0),
		take1("k", inf, 1, 0), take1("k", -inf, 1, 0), peek("k", nan, 1, 0), retry("k", 0, 1, 1, 0), peek("k", 10, 1, 0))
	add("T9/invalid-rate-and-cost", []string{"T9"},
		"refill_per_second and cost must be finite and > 0; cost must not exceed capacity; the default cost 1 "+
			"exceeds a capacity of 0.5",
		take1("k", 10, 0, 0), take1("k", 10, nan, 0), take1("k", 10, -inf, 0), take("k", 10, 1, 0, 0),
		take("k", 10, 1, -2, 0), take("k", 10, 1, nan, 0), take("k", 10, 1, 10.5, 0), take1("k", 0.5, 1, 0),
		retry("k", 10, 1, 11, 0), retry("k", 10, 1, inf, 0), peek("k", 10, nan, 0), take("k", 10, 1, 10, 0))
	add("T9/check-order", []string{"T9"},
		"fields are checked in the order capacity, refill_per_second, cost: the first failing one is named",
		take("k", nan, nan, nan, 0), take("k", 1, nan, nan, 0), take("k", 1, 1, nan, 0), take("k", 0, 1, 5, 0),
		take("k", 1, 0, 5, 0))
	add("T9/subnormal-values-are-valid", []string{"T9", "T3"},
		"subnormal values are finite and positive",
		take("k", 5e-324, 5e-324, 5e-324, 0), peek("k", 5e-324, 5e-324, 1000), take("k", 1e-310, 1e-310, 1e-310, 1000),
		peek("k", 1e-310, 1, 2000), retry("k", 1e-310, 1e-310, 1e-310, 2000))
	add("T10/reset-and-reset-all", []string{"T10", "T8"},
		"reset makes a key's bucket absent (it starts full); reset_all does so for every key of the table",
		take("a", 4, 1, 4, 0), take("b", 4, 1, 3, 0), reset("a"), peek("a", 4, 1, 0), peek("b", 4, 1, 0),
		take1("a", 4, 1, 0), reset("never-seen"), resetAll(), peek("a", 4, 1, 0), peek("b", 4, 1, 0),
		take("b", 4, 1, 4, 0), take1("b", 4, 1, 0))
	add("T12/reclaim-forgets-full-buckets", []string{"T12", "T6"},
		"a reclaim forgets exactly the buckets that are full at its clock by its limits, and counts them; "+
			"a forgotten key peeks and takes as the full bucket it was",
		take("a", 4, 1, 4, 0), take("b", 4, 1, 1, 0), reclaim(4, 1, 1000), peek("a", 4, 1, 1000), peek("b", 4, 1, 1000),
		reclaim(4, 1, 3000), reclaim(4, 1, 4000), peek("a", 4, 1, 4000), take("a", 4, 1, 4, 4000), reclaim(4, 1, 4000))
	add("T12/floor-stamps-stale-takes", []string{"T12", "T4", "T5"},
		"after a reclaim at 2000 ms, a bucket made by a take with an older clock is stamped 2000 ms, not its clock: "+
			"the forgotten bucket was full at 2000 ms and a stale clock must not be credited that time again; "+
			"a key never seen before is stamped the same way",
		take("k", 10, 10, 10, 1000), reclaim(10, 10, 2000), take("k", 10, 10, 10, 0), take1("k", 10, 10, 2000),
		peek("k", 10, 10, 2100), take("j", 10, 10, 10, 0), take1("j", 10, 10, 2000), peek("j", 10, 10, 2000))
	add("T12/reclaim-spares-newer-timestamps", []string{"T12", "T8"},
		"a bucket whose timestamp is after the reclaim's clock is never forgotten, even when full by the "+
			"reclaim's smaller capacity; at its own timestamp it is",
		take("k", 1, 1000, 0.5, 5000), reclaim(0.5, 1000, 1000), peek("k", 1, 1000, 5000), reclaim(0.5, 1000, 5000),
		peek("k", 1, 1000, 5000))
	add("T12/reset-keeps-floor-reset-all-clears-it", []string{"T12", "T10"},
		"reset makes a bucket absent under the table's floor; reset_all starts a table never reclaimed",
		reclaim(2, 1, 3000), take("k", 2, 1, 1, 3000), reset("k"), take("k", 2, 1, 2, 0), take1("k", 2, 1, 3000),
		resetAll(), take("k", 2, 1, 2, 0), take("k", 2, 1, 2, 2000))
	add("T12/reclaim-bad-limits", []string{"T12", "T9"},
		"a reclaim checks capacity, then refill_per_second, and forgets nothing when either is invalid; a cost is ignored",
		take("k", 1, 1000, 1, 0), reclaim(0, 1, 5000), reclaim(1, math.NaN(), 5000), peek("k", 1, 1000, 0),
		Request{Op: OpReclaim, Capacity: F(1), RefillPerSecond: F(1000), Cost: F(5), NowMs: I(int64(5000))})
	add("protocol/bad-requests", []string{"protocol"},
		"an unknown operation or a missing field is bad_request; the table is unchanged",
		Request{Op: "tb.frobnicate", Key: I("k")},
		Request{Op: OpTake, Capacity: F(1), RefillPerSecond: F(1), NowMs: I(int64(0))},
		Request{Op: OpTake, Key: I("k"), RefillPerSecond: F(1), NowMs: I(int64(0))},
		Request{Op: OpTake, Key: I("k"), Capacity: F(1), RefillPerSecond: F(1)},
		Request{Op: OpPeek, Key: I("k"), Capacity: F(1), NowMs: I(int64(0))},
		Request{Op: OpReset},
		Request{Op: OpReclaim, Capacity: F(1), RefillPerSecond: F(1)},
		peek("k", 1, 1, 0))
	return out
}

// elapsedSteps picks a rate at which a refill over elapsed = 2^53 ms differs
// from one over 2^53-1 ms (what float64(now) - float64(last) gives for
// last = 1, now = 2^53+1), by a deterministic search.
func elapsedSteps() []Request {
	const now = 1<<53 + 1
	for _, rate := range []float64{1e-13, 3e-14, 7e-14, 1.1e-13, 1.7e-13, 2.3e-13} {
		exact := float64(float64(1<<53)/1000) * rate
		viaDoubles := float64(float64(1<<53-1)/1000) * rate
		if exact != viaDoubles && exact < 1 {
			return []Request{take("k", 1, rate, 1, 1), peek("k", 1, rate, now), take("k", 1, rate, 0.5, now)}
		}
	}
	panic("conform: no rate separates the two elapsed computations")
}

// refusalSteps finds, by a deterministic search, an emptied bucket where
// refilling over [0, t2] in one step gives other bits than refilling over
// [0, t1] and then [t1, t2], and scripts a refused take at t1 between them.
// The two-step sum appears only here, to pick the inputs.
func refusalSteps() []Request {
	for _, rate := range []float64{0.1, 0.3, 0.7, 1.0 / 3, 1.1, 2.9} {
		lim := model.Limits{Capacity: 1, RefillPerSecond: rate}
		b, _, _ := model.Take(model.Bucket{}, lim, 1, 0)
		for t1 := int64(1); t1 < 300; t1++ {
			for t2 := t1 + 1; t2 < t1+300; t2++ {
				once := model.Refill(b, lim, t2)
				mid := model.Bucket{Present: true, Tokens: model.Refill(b, lim, t1), LastMs: t1}
				if twice := model.Refill(mid, lim, t2); once < 1 && twice < 1 && once != twice {
					return []Request{take("k", 1, rate, 1, 0), take("k", 1, rate, 1, t1), peek("k", 1, rate, t2),
						take("k", 1, rate, once, t2), peek("k", 1, rate, t2)}
				}
			}
		}
	}
	panic("conform: no clocks where a refusal that writes rounds differently")
}

// seedCeilSteps finds, by a deterministic search over small limits, a bucket
// where the seed's closed-form retry-after is short of the model's answer.
// The closed form appears only here, to pick the inputs; the answers come
// from model.RetryAfter like every other answer.
func seedCeilSteps() []Request {
	for c := 2; c < 40; c++ {
		for r := 1; r < 40; r++ {
			for t := int64(1); t < 1000; t += 7 {
				capacity, rate := float64(c), float64(r)/3
				lim := model.Limits{Capacity: capacity, RefillPerSecond: rate}
				b, _, _ := model.Take(model.Bucket{}, lim, capacity, 0)
				cost := capacity - 1
				have := model.Refill(b, lim, t)
				if have >= cost {
					continue
				}
				est := int64(math.Ceil((cost - have) / rate * 1000))
				if w := model.RetryAfter(b, lim, cost, t); w > est {
					return []Request{take("k", capacity, rate, capacity, 0), retry("k", capacity, rate, cost, t),
						take("k", capacity, rate, cost, t+est), take("k", capacity, rate, cost, t+w)}
				}
			}
		}
	}
	panic("conform: no limits where the closed-form retry-after is short")
}

func alternating() []Request {
	var steps []Request
	for i := 0; i < 40; i++ {
		now := int64(1000)
		if i%2 == 1 {
			now = 0
		}
		steps = append(steps, take1("k", 10, 10, now))
	}
	return steps
}

// fmaSteps finds, by a deterministic search, limits where rounding the
// product before the sum differs from a fused multiply-add, and scripts a
// take that leaves those tokens followed by a peek that adds the accrual.
func fmaSteps() []Request {
	for c := 1; c < 200; c++ {
		capacity := 100 + float64(c)/7
		cost := capacity - 0.3
		lim := model.Limits{Capacity: capacity, RefillPerSecond: 1 / 3.0}
		b, _, _ := model.Take(model.Bucket{}, lim, cost, 0)
		for ms := int64(1); ms < 2000; ms++ {
			a := float64(ms) / 1000
			if math.FMA(a, lim.RefillPerSecond, b.Tokens) != model.Refill(b, lim, ms) {
				return []Request{take("k", capacity, lim.RefillPerSecond, cost, 0), peek("k", capacity, lim.RefillPerSecond, ms),
					take("k", capacity, lim.RefillPerSecond, model.Refill(b, lim, ms), ms)}
			}
		}
	}
	panic("conform: no limits where a fused multiply-add differs")
}

// Credit-table request builders.

func crNew() Request { return Request{Op: OpNew} }

func reserve(client, class string) Request {
	return Request{Op: OpReserve, Client: client, Class: class}
}

func ep(n int) json.RawMessage { return rawJSON("$e" + itoa(n)) }

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

func enqueue(client string, slot, epoch int, payload string, now int64) Request {
	return Request{Op: OpEnqueue, Client: client, Slot: I(slot), Epoch: ep(epoch), Payload: I(payload), NowMs: I(now)}
}

func crTake(slot, epoch int) Request { return Request{Op: OpCrTake, Slot: I(slot), Epoch: ep(epoch)} }
func finish(slot, epoch int) Request { return Request{Op: OpFinish, Slot: I(slot), Epoch: ep(epoch)} }
func release(client string, slot, epoch int) Request {
	return Request{Op: OpRelease, Client: client, Slot: I(slot), Epoch: ep(epoch)}
}
func sweep() Request                { return Request{Op: OpSweep} }
func enqueuedReq() Request          { return Request{Op: OpEnqueued} }
func snapshot() Request             { return Request{Op: OpSnapshot} }
func bounds() Request               { return Request{Op: OpBounds} }
func exitReq(client string) Request { return Request{Op: OpExit, Client: client} }
func closeReq() Request             { return Request{Op: OpClose} }

func crScripts() []script {
	var out []script
	add := func(name string, covers []string, note string, steps ...Request) {
		out = append(out, script{name, covers, note, append([]Request{crNew()}, steps...)})
	}
	var fill []Request
	for i := 0; i < 27; i++ {
		fill = append(fill, reserve("a", "general"))
	}
	for i := 0; i < 7; i++ {
		fill = append(fill, reserve("b", "internal"))
	}
	add("C1/class-bounds", []string{"C1", "C2", "C14"},
		"general owns slots 1..26 and internal 27..32; the 27th general and the 7th internal reserve are exhausted",
		append(append([]Request{bounds(), snapshot()}, fill...), snapshot(), bounds())...)
	add("C2/lowest-free-slot", []string{"C2", "C9"},
		"used sequentially, reserve claims the lowest free slot of its class",
		reserve("a", "general"), reserve("a", "general"), reserve("a", "general"), release("a", 2, 2),
		reserve("b", "general"), reserve("b", "internal"), release("b", 27, 5), reserve("a", "internal"), snapshot())
	add("C2/exhausted-then-free", []string{"C2", "C8"},
		"exhausted only while every slot of the class is in use; one finish makes room again",
		append(append([]Request{}, fill[27:33]...), reserve("b", "internal"), enqueue("b", 29, 3, "p", 5),
			crTake(29, 3), reserve("a", "internal"), finish(29, 3), reserve("a", "internal"), snapshot())...)
	add("C3/epochs-never-reused", []string{"C3"},
		"every reservation gets a new epoch, also on a recycled slot; a stale token changes nothing",
		reserve("a", "general"), release("a", 1, 1), reserve("a", "general"), enqueue("a", 1, 1, "stale", 0),
		release("a", 1, 1), crTake(1, 1), finish(1, 1), snapshot(), enqueue("a", 1, 2, "fresh", 0), crTake(1, 1),
		finish(1, 1), crTake(1, 2), finish(1, 2), reserve("a", "general"), finish(1, 2), crTake(1, 2), snapshot())
	add("C3/token-slot-and-epoch-both-pinned", []string{"C3", "C5", "C6"},
		"a token is {slot, epoch}: the right epoch on another slot does not match",
		reserve("a", "general"), reserve("a", "general"), enqueue("a", 2, 1, "x", 0), enqueue("a", 1, 2, "y", 0),
		enqueue("a", 1, 1, "x", 0), crTake(2, 1), crTake(1, 2), crTake(1, 1), finish(2, 1), release("a", 1, 2),
		finish(1, 1), snapshot())
	add("C4-C5/enqueue-holder-state-once", []string{"C4", "C5"},
		"only the reserving holder enqueues, with its epoch, only from reserved, in one write that shows the payload",
		reserve("a", "general"), enqueue("b", 1, 1, "thief", 10), snapshot(), enqueuedReq(), enqueue("a", 1, 1, "mine", 10),
		enqueue("a", 1, 1, "again", 11), enqueuedReq(), snapshot())
	add("C6-C7/take-once-payload-stays", []string{"C6", "C7"},
		"take moves enqueued to processing and returns the payload once; enqueued lists it no more",
		reserve("a", "general"), enqueue("a", 1, 1, "req-1", 5), crTake(1, 1), crTake(1, 1), enqueuedReq(),
		snapshot(), finish(1, 1), crTake(1, 1), snapshot())
	add("C8/finish-exactly-once", []string{"C8"},
		"finish frees processing (and, defensively, enqueued) rows of its epoch exactly once; never a reserved one",
		reserve("a", "general"), reserve("a", "general"), finish(1, 1), enqueue("a", 1, 1, "p", 0), enqueue("a", 2, 2, "q", 0),
		crTake(1, 1), finish(1, 1), finish(1, 1), finish(2, 2), finish(2, 2), snapshot())
	add("C9/release-holder-epoch-reserved-only", []string{"C9"},
		"release frees a reserved row only for its holder and epoch, at most once, never an enqueued one",
		reserve("a", "general"), reserve("a", "general"), release("b", 1, 1), release("a", 1, 2), enqueue("a", 2, 2, "p", 0),
		release("a", 2, 2), release("a", 1, 1), release("a", 1, 1), snapshot())
	add("C10/sweep-dead-reserved-only", []string{"C10"},
		"sweep frees only reserved rows of exited holders; enqueued and processing rows and live holders stay",
		reserve("a", "general"), reserve("b", "general"), reserve("b", "general"), reserve("c", "internal"),
		enqueue("b", 2, 2, "p", 0), reserve("b", "general"), enqueue("b", 4, 5, "q", 0), crTake(4, 5), sweep(),
		exitReq("a"), exitReq("b"), exitReq("b"), sweep(), sweep(), snapshot(), enqueuedReq(), crTake(2, 2),
		finish(2, 2), finish(4, 5), snapshot())
	add("C10/sweep-counts-several", []string{"C10", "C14"},
		"one sweep frees every reserved row of every exited holder and answers how many",
		reserve("a", "general"), reserve("a", "general"), reserve("a", "internal"), reserve("b", "general"),
		exitReq("a"), sweep(), snapshot(), reserve("c", "general"), snapshot())
	add("C17/sweep-leaves-no-exited-reservation", []string{"C17", "C10"},
		"a sweep after a holder's exit leaves none of its reserved rows, in either class; the next sweep finds "+
			"nothing, and a row the holder enqueued stays with the owner",
		reserve("a", "general"), reserve("b", "general"), reserve("a", "internal"), reserve("a", "general"),
		enqueue("a", 3, 4, "p", 0), exitReq("a"), sweep(), sweep(), snapshot(), exitReq("b"), sweep(), snapshot(),
		crTake(3, 4), finish(3, 4), snapshot())
	add("C11/dead-table", []string{"C11"},
		"after close: reserve and enqueue answer no_table, take none, finish/release/sweep free nothing, enqueued "+
			"is empty, snapshot all zero, bounds unchanged",
		reserve("a", "general"), reserve("a", "general"), enqueue("a", 2, 2, "p", 0), closeReq(),
		reserve("a", "general"), enqueue("a", 1, 1, "q", 0), crTake(2, 2), finish(2, 2), release("a", 1, 1),
		exitReq("a"), sweep(), enqueuedReq(), snapshot(), bounds())
	add("C12/defects-are-bad-requests", []string{"C12", "protocol"},
		"a class other than general/internal, a slot outside 1..32, a missing epoch or client: bad_request, "+
			"nothing changes",
		reserve("a", "vip"), Request{Op: OpReserve, Class: "general"}, reserve("a", "general"),
		crTake(0, 1), crTake(33, 1), Request{Op: OpFinish, Slot: I(1)}, enqueue("a", 33, 1, "p", 0),
		Request{Op: OpEnqueue, Client: "a", Slot: I(1), Epoch: ep(1), NowMs: I(int64(0))},
		Request{Op: "cr.frobnicate"}, snapshot())
	add("C13/enqueued-order", []string{"C13", "C4"},
		"enqueued lists rows by marked_ms ascending, ties by slot; marks come from the caller (any int64)",
		reserve("a", "general"), reserve("a", "general"), reserve("a", "general"), reserve("a", "internal"),
		enqueue("a", 1, 1, "late", 30), enqueue("a", 3, 3, "tie-hi", 10), enqueue("a", 2, 2, "tie-lo", 10),
		enqueue("a", 27, 4, "negative", -9223372036854775808), enqueuedReq(), crTake(3, 3), enqueuedReq())
	add("C4/payloads-are-opaque", []string{"C4", "C6"},
		"payloads are stored and returned exactly, including ones that look like ETS match-spec terms",
		reserve("a", "general"), reserve("a", "general"), reserve("a", "general"), reserve("a", "general"),
		enqueue("a", 1, 1, ":_", 0), enqueue("a", 2, 2, "$1", 0), enqueue("a", 3, 3, "{:const, nil}", 0),
		enqueue("a", 4, 4, "", 0), enqueuedReq(), crTake(1, 1), crTake(2, 2), crTake(3, 3), crTake(4, 4))
	return out
}
