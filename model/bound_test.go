package model

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// eta is 2^-1074, the smallest subnormal: the spacing of the binary64
// values below 2^-1021, and a divisor of every binary64 value.
const eta = math.SmallestNonzeroFloat64

// boundRun takes cost from one key at each clock in turn through Take and
// holds the committed takes to a T5Bound, failing the test at the first
// take the bound calls exceeded. It returns the bound and how many takes
// were admitted.
func boundRun(t *testing.T, lim Limits, cost float64, clocks []int64) (T5Bound, int) {
	t.Helper()
	var b Bucket
	var bound T5Bound
	admitted := 0
	for i, now := range clocks {
		var ok bool
		b, ok, _ = Take(b, lim, cost, now)
		if !ok {
			continue
		}
		admitted++
		bound.Commit(lim, cost, now)
		if bound.Exceeded() {
			t.Fatalf("take %d at %d ms (limits %+v, cost %v): T5 exceeded on the model itself: %v", i, now, lim, cost, &bound)
		}
	}
	return bound, admitted
}

// TestT5BoundSubnormalLimits: T5 at capacity = rate = 2^-1074 with clocks
// near the int64 limit, the input of FuzzHostile's corpus entry
// t5-subnormal-limits. The second and third takes are credited 0.642 and
// 0.692 of the one representable step, each rounded up to a whole one (T3),
// so three takes of 2^-1074 are admitted where the exact bound is 2.334 ×
// 2^-1074 and its computed value 2 × 2^-1074. The slack of one step (two
// accruals and the bound's own product, half a step each, rounded down)
// covers that; a fourth take at the same clock, credited nothing (the model
// refuses it), is over it.
func TestT5BoundSubnormalLimits(t *testing.T) {
	lim := Limits{Capacity: eta, RefillPerSecond: eta}
	clocks := []int64{9223372036854773912, 8350971919632303923, 9223372036854774554, 9223372036854775246}
	bound, n := boundRun(t, lim, eta, clocks)
	if n != 3 || bound.Admitted != 3*eta || bound.Limit() != 2*eta || bound.SpanMs() != 1334 || bound.Accruals != 2 || bound.Slack() != eta {
		t.Fatalf("%d admitted, %v, %d accruals, slack %v; want 3 takes of 2^-1074 against a bound of 2 × 2^-1074, 2 accruals, a slack of 2^-1074",
			n, &bound, bound.Accruals, bound.Slack())
	}
	if _, ok, _ := Take(Bucket{Present: true, LastMs: clocks[3]}, lim, eta, clocks[3]); ok {
		t.Fatal("an empty bucket gave a take at its own clock")
	}
	bound.Commit(lim, eta, clocks[3])
	if !bound.Exceeded() {
		t.Fatalf("a fourth take of 2^-1074 with no time elapsed is within the bound: %v", &bound)
	}
}

// TestT5BoundSlackPerAccrual: the slack must grow with the accruals, by
// half of 2^-1074 each, and no less will do. Takes 501 ms apart at capacity
// = rate = 2^-1074 are each credited 0.501 of a step, rounded up to a whole
// one, so 41 takes are admitted over 20.04 s where the exact bound is 21.04
// × 2^-1074: every take after the first gains 0.499 × 2^-1074 the bound
// does not have. After an odd number k of takes the admitted total is the
// computed bound plus floor(k/2) × 2^-1074, the whole slack (a fixed few
// steps would fail here), and one more take at the last clock, which
// accrues nothing and adds no slack, is over it.
func TestT5BoundSlackPerAccrual(t *testing.T) {
	lim := Limits{Capacity: eta, RefillPerSecond: eta}
	const n = 41
	clocks := make([]int64, n)
	for i := range clocks {
		clocks[i] = math.MaxInt64 - 30_000 + 501*int64(i)
	}
	for k := 1; k <= n; k++ {
		bound, admitted := boundRun(t, lim, eta, clocks[:k])
		if admitted != k {
			t.Fatalf("%d of %d takes admitted: %v", admitted, k, &bound)
		}
		over := bound.Admitted - bound.Limit()
		if k%2 == 1 && (over != float64(k/2)*eta || over != bound.Slack()) {
			t.Fatalf("after %d takes the total is over the computed bound by %v, want %d × 2^-1074, the slack %v: %v", k, over, k/2, bound.Slack(), &bound)
		}
		if k == n {
			bound.Commit(lim, eta, clocks[n-1])
			if !bound.Exceeded() {
				t.Fatalf("a take past the slack is within the bound: %v", &bound)
			}
		}
	}
}

// TestT5BoundSlackTies: the bound's own product counts too, and so does a
// reclaim's accrual. At capacity 2 × 2^-1074, rate 2^-1074 and takes of the
// whole capacity 1500 ms apart, each accrual of 1.5 steps is a tie and
// rounds to even, up to 2, while the bound's product of 4.5 steps rounds
// down to 4: four takes admit 8 steps against a computed bound of 6, which
// the slack of floor((3+1)/2) = 2 steps covers exactly (floor(3/2) would
// not). The same happens when the second accrual is a reclaim's: it finds
// the bucket full and forgets it, and a take at the first clock finds it
// absent and takes a full bucket; that take counts as an accrual because a
// reclaim newer than every take came before it.
func TestT5BoundSlackTies(t *testing.T) {
	lim := Limits{Capacity: 2 * eta, RefillPerSecond: eta}
	t0 := int64(math.MaxInt64 - 10_000)
	check := func(name string, ins []TBInput[string]) {
		t.Helper()
		var tb TBTable[string]
		var bound T5Bound
		for i, in := range ins {
			var out TBOutput
			tb, out = tb.Step(in)
			switch {
			case in.Kind == TBReclaim:
				if out.Reclaimed != 1 {
					t.Fatalf("%s: step %d: the full bucket was not forgotten: %+v", name, i, out)
				}
				bound.Reclaim(in.Limits, in.NowMs)
			case !out.OK:
				t.Fatalf("%s: step %d (%v) refused", name, i, in)
			default:
				bound.Commit(in.Limits, in.Cost, in.NowMs)
			}
			if bound.Exceeded() {
				t.Fatalf("%s: step %d (%v): T5 exceeded on the model itself: %v", name, i, in, &bound)
			}
		}
		if bound.Admitted != 8*eta || bound.Limit() != 6*eta || bound.Accruals != 3 || bound.Slack() != 2*eta {
			t.Fatalf("%s: %v, %d accruals, slack %v; want 8 steps admitted, a bound of 6, 3 accruals, a slack of 2", name, &bound, bound.Accruals, bound.Slack())
		}
	}
	take := func(now int64) TBInput[string] {
		return TBInput[string]{Kind: TBTake, Key: "k", Limits: lim, Cost: 2 * eta, NowMs: now}
	}
	check("takes", []TBInput[string]{take(t0), take(t0 + 1500), take(t0 + 3000), take(t0 + 4500)})
	check("reclaim", []TBInput[string]{take(t0), {Kind: TBReclaim, Limits: lim, NowMs: t0 + 1500}, take(t0), take(t0 + 3000), take(t0 + 4500)})
}

// TestT5BoundHostileMagnitudes: the model, whose arithmetic the
// implementation matches bit for bit (T3), never exceeds T5's bound with
// its slack, at capacities, rates and costs from 2^-1074 to the normal
// range, clocks moving both ways near zero and near the int64 limit, and
// reclaims with the key's own limits now and then.
func TestT5BoundHostileMagnitudes(t *testing.T) {
	mags := []float64{eta, 2 * eta, 3 * eta, 7 * eta, 1000 * eta, 0x1p-1023, math.Float64frombits(0x000fffffffffffff),
		0x1p-1022, 0x1p-1021, 5e-315, 1e-310, 1e-300, 0x1p-52, 0.75, 1, 10}
	steps := []int64{0, 1, 250, 499, 500, 501, 999, 1500, 2500, -300, -1000}
	r := rand.New(rand.NewPCG(5, 324))
	admitted := 0
	for iter := range 3000 {
		lim := Limits{Capacity: mags[r.IntN(len(mags))], RefillPerSecond: mags[r.IntN(len(mags))]}
		cost := lim.Capacity
		switch r.IntN(3) {
		case 1:
			cost = max(lim.Capacity/float64(2+r.IntN(9)), eta)
		case 2:
			cost = min(float64(1+r.IntN(5))*eta, lim.Capacity)
		}
		now := int64(r.IntN(4000)) - 2000
		if r.IntN(2) == 0 {
			now = math.MaxInt64 - 1_000_000
		}
		var tb TBTable[string]
		var bound T5Bound
		for i := range 100 {
			now += steps[r.IntN(len(steps))]
			in := TBInput[string]{Kind: TBTake, Key: "k", Limits: lim, Cost: cost, NowMs: now}
			if r.IntN(8) == 0 {
				in = TBInput[string]{Kind: TBReclaim, Limits: lim, NowMs: now}
			}
			var out TBOutput
			tb, out = tb.Step(in)
			switch {
			case in.Kind == TBReclaim:
				bound.Reclaim(in.Limits, in.NowMs)
			case out.OK:
				admitted++
				bound.Commit(in.Limits, in.Cost, in.NowMs)
				if bound.Exceeded() {
					t.Fatalf("iteration %d, step %d (%v): T5 exceeded on the model itself: %v", iter, i, in, &bound)
				}
			}
		}
	}
	if admitted < 3000*10 {
		t.Fatalf("only %d takes admitted in 3000 runs of 100 operations", admitted)
	}
}

// TestT5BoundAccrualCount: a take counts an accrual when its clock is newer
// than every earlier take's, or a reclaim newer than them came between;
// a take at the same clock after that counts none, and a reclaim at the
// newest take's clock credits no time.
func TestT5BoundAccrualCount(t *testing.T) {
	lim := Limits{Capacity: 1, RefillPerSecond: 1}
	var b T5Bound
	b.Commit(lim, 1, 0)
	b.Reclaim(lim, 10)
	b.Commit(lim, 1, 10)
	b.Commit(lim, 1, 10)
	if b.Accruals != 1 {
		t.Errorf("takes at 0, reclaim at 10, takes at 10 and 10: %d accruals, want 1", b.Accruals)
	}
	var c T5Bound
	c.Commit(lim, 1, 5)
	c.Reclaim(lim, 5)
	c.Commit(lim, 1, 5)
	if c.Accruals != 0 {
		t.Errorf("take at 5, reclaim at 5, take at 5: %d accruals, want 0", c.Accruals)
	}
}

// TestT5BoundStringNamesSlack: the description names the absolute slack
// where it outweighs the relative tolerance (subnormal limits), and only
// there.
func TestT5BoundStringNamesSlack(t *testing.T) {
	tiny := Limits{Capacity: eta, RefillPerSecond: eta}
	var b T5Bound
	b.Commit(tiny, eta, 0)
	b.Commit(tiny, eta, 1000)
	if s := b.String(); !strings.Contains(s, "rounding slack") {
		t.Errorf("subnormal limits: %s lacks the rounding slack", s)
	}
	var c T5Bound
	c.Commit(Limits{Capacity: 5, RefillPerSecond: 1}, 1, 0)
	c.Commit(Limits{Capacity: 5, RefillPerSecond: 1}, 1, 1000)
	if s := c.String(); strings.Contains(s, "rounding slack") {
		t.Errorf("ordinary limits: %s names a slack the tolerance covers", s)
	}
	// One take at subnormal limits credited no time: the slack is 0 and so
	// is the relative tolerance (it underflows), and a zero slack is not
	// named.
	var d T5Bound
	d.Commit(tiny, eta, 0)
	if d.Slack() != 0 || d.Limit()*T5Tolerance != 0 {
		t.Fatalf("slack %v, tolerance %v: want both 0", d.Slack(), d.Limit()*T5Tolerance)
	}
	if s := d.String(); strings.Contains(s, "rounding slack") {
		t.Errorf("no accrual: %s names a zero slack", s)
	}
}
