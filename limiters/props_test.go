package limiters

import (
	"math"
	"math/rand/v2"
	"testing"
)

const msNs = int64(1e6)

func ev(at int64, ok bool) Event { return Event{Cost: 1, LoNs: at, HiNs: at, OK: ok} }

// The field notes' stale clock: readings 1000 ms, 0 ms, … all admitted at
// burst 10, rate 10/s; the bound over [0, 1 s] is 20 (golang/go#56287).
func TestBoundCatchesStaleReadings(t *testing.T) {
	p := Params{Burst: 10, Rate: 10}
	var evs []Event
	for i := range 200 {
		at := 1000 * msNs
		if i%2 == 1 {
			at = 0
		}
		evs = append(evs, ev(at, true))
	}
	f := CheckBound(p, evs)
	if f.Holds || f.Seen != 200 || math.Abs(f.Allowed-20) > 1e-6 {
		t.Fatalf("CheckBound = %+v, want a violation: 200 admitted where 20 are allowed", f)
	}
	// Only the first 20 admitted: exactly the bound, which holds.
	for i := 20; i < len(evs); i++ {
		evs[i].OK = false
	}
	if f := CheckBound(p, evs); !f.Holds {
		t.Fatalf("CheckBound = %+v, want it to hold at exactly b + r·Δ", f)
	}
}

// A window inside the history: 5 admitted at one instant with burst 4
// breaks the bound even when the whole history's span would allow them.
func TestBoundLooksAtEveryWindow(t *testing.T) {
	p := Params{Burst: 4, Rate: 1}
	evs := []Event{ev(0, true)}
	for range 5 {
		evs = append(evs, ev(10_000*msNs, true))
	}
	f := CheckBound(p, evs)
	if f.Holds || f.FromNs != 10_000*msNs || f.ToNs != 10_000*msNs || f.Seen != 5 {
		t.Fatalf("CheckBound = %+v, want the window [10 s, 10 s] with 5 admitted", f)
	}
}

// A reading known only as an interval counts with its widest span: two
// calls at [0, 1 s] and [0, 1 s] with burst 1 and rate 1 may have been a
// second apart, so they do not break the bound; three do.
func TestBoundUncertainReadings(t *testing.T) {
	p := Params{Burst: 1, Rate: 1}
	e := Event{Cost: 1, LoNs: 0, HiNs: 1000 * msNs, OK: true}
	if f := CheckBound(p, []Event{e, e}); !f.Holds {
		t.Fatalf("two calls: %+v, want it to hold", f)
	}
	if f := CheckBound(p, []Event{e, e, e}); f.Holds {
		t.Fatalf("three calls: %+v, want a violation", f)
	}
}

func TestBoundInfiniteRate(t *testing.T) {
	if f := CheckBound(Params{Rate: math.Inf(1)}, []Event{ev(0, true), ev(0, true)}); !f.NA || !f.Holds {
		t.Fatalf("infinite rate: %+v, want n/a", f)
	}
}

// A limiter that starts empty (x/time/rate before v0.7.0 at time.Time{})
// refuses the first call of a full bucket: spurious.
func TestRefusalOfAFullBucket(t *testing.T) {
	p := Params{Burst: 5, Rate: 10}
	f := CheckRefusals(p, []Event{ev(0, false)})
	if f.Holds || f.Seen != 5 {
		t.Fatalf("CheckRefusals = %+v, want a spurious refusal with 5 in the ideal bucket", f)
	}
	// Burst equal to the cost: still room, exactly.
	if f := CheckRefusals(Params{Burst: 1, Rate: 1}, []Event{ev(0, false)}); f.Holds {
		t.Fatalf("cost = burst on a full bucket: %+v, want a spurious refusal", f)
	}
}

func TestRefusalsThatAreRight(t *testing.T) {
	p := Params{Burst: 2, Rate: 10}
	evs := []Event{ev(0, true), ev(0, true), ev(0, false), // empty
		ev(50*msNs, false),  // 0.5 token
		ev(100*msNs, true),  // 1 token
		ev(100*msNs, false), // empty again
		ev(0, false),        // stale: never counted
	}
	if f := CheckRefusals(p, evs); !f.Holds {
		t.Fatalf("CheckRefusals = %+v, want no spurious refusal", f)
	}
	// Refilled by accrual to exactly one token: within the tolerance a
	// refusal is not counted; a clear token is.
	if f := CheckRefusals(p, []Event{ev(0, true), ev(0, true), ev(100*msNs, false)}); !f.Holds {
		t.Fatalf("refusal at exactly one accrued token: %+v, want it tolerated", f)
	}
	if f := CheckRefusals(p, []Event{ev(0, true), ev(0, true), ev(150*msNs, false)}); f.Holds {
		t.Fatalf("refusal at 1.5 accrued tokens: %+v, want a spurious refusal", f)
	}
	// Cost above the burst: a refusal is what the bucket must answer.
	if f := CheckRefusals(p, []Event{{Cost: 3, OK: false}}); !f.Holds {
		t.Fatalf("cost above burst: %+v", f)
	}
	// Infinite rate: every refusal is spurious.
	if f := CheckRefusals(Params{Rate: math.Inf(1)}, []Event{ev(0, false)}); f.Holds {
		t.Fatalf("infinite rate: %+v, want a spurious refusal", f)
	}
}

// uber-go/ratelimit #119/#124: after an idle period every Take returns at
// once. slack 10, rate 100/s: 12 returns within 10 µs break the bound of
// 11 + 100·10e-6.
func TestPacer(t *testing.T) {
	p := Params{Rate: 100, Slack: 10}
	var evs []Event
	for i := range 12 {
		evs = append(evs, Event{RetNs: 2000*msNs + int64(i)*1000})
	}
	if f := CheckPacer(p, evs); f.Holds || f.Seen != 12 {
		t.Fatalf("CheckPacer = %+v, want 12 returns in a window allowing 11", f)
	}
	if f := CheckPacer(p, evs[:11]); !f.Holds {
		t.Fatalf("11 returns: %+v, want it to hold", f)
	}
	// Paced at exactly the rate, for a long time: holds.
	evs = evs[:0]
	for i := range 500 {
		evs = append(evs, Event{RetNs: int64(i) * 10 * msNs})
	}
	if f := CheckPacer(p, evs); !f.Holds {
		t.Fatalf("paced at the rate: %+v", f)
	}
}

func TestShrinkFindsAMinimalList(t *testing.T) {
	var steps []Step
	for i := range 100 {
		steps = append(steps, Step{Op: "call", AtNs: int64(i)})
	}
	// Fails while it still holds steps 17 and 60.
	fails := func(s []Step) bool {
		n := 0
		for _, x := range s {
			if x.AtNs == 17 || x.AtNs == 60 {
				n++
			}
		}
		return n == 2
	}
	got := Shrink(steps, fails)
	if len(got) != 2 || got[0].AtNs != 17 || got[1].AtNs != 60 {
		t.Fatalf("Shrink = %v, want steps 17 and 60", got)
	}
}

func TestBadInputNamesTheField(t *testing.T) {
	if _, err := Origin("mars"); err == nil || !contains(err.Error(), "origin") {
		t.Fatalf("Origin(mars) = %v, want an error naming origin", err)
	}
	if _, err := Check("L9", Params{}, nil); err == nil || !contains(err.Error(), "property") {
		t.Fatalf("Check(L9) = %v, want an error naming the property", err)
	}
	if _, err := TargetOf("example.com/x"); err == nil || !contains(err.Error(), "library") {
		t.Fatalf("TargetOf = %v, want an error naming the library", err)
	}
}

func TestCompareVersions(t *testing.T) {
	if CompareVersions("v0.10.0", "v0.9.0") <= 0 || CompareVersions("v0.1.0", "v0.1.0") != 0 || CompareVersions("v0.2.0", "v0.16.0") >= 0 {
		t.Fatal("CompareVersions does not order numerically")
	}
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}

// A bucket whose time never goes back (T4) keeps L1 whatever order the
// readings come in, stale ones included; the same bucket storing stale
// readings (x/time/rate's behaviour) breaks it. Random readings over 2 s,
// a third of them up to 500 ms stale.
func TestBoundMonotoneBucketKeepsIt(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	caught := 0
	for trial := range 300 {
		p := Params{Burst: float64(1 + r.IntN(5)), Rate: []float64{0, 1, 10, 100}[r.IntN(4)]}
		var steps []Step
		now := int64(0)
		for range 5 + r.IntN(60) {
			now += int64(r.IntN(50)) * msNs
			at := now
			if r.IntN(3) == 0 {
				at -= int64(r.IntN(500)) * msNs
			}
			steps = append(steps, Step{Op: "call", AtNs: at, Cost: float64(1 + r.IntN(2))})
		}
		evs, _ := bucket{}.RunSteps(p, steps)
		if f := CheckBound(p, evs); !f.Holds {
			t.Fatalf("trial %d: the monotone bucket breaks L1: %+v\nparams %+v\nevents %+v", trial, f, p, evs)
		}
		evs, _ = bucket{stale: true}.RunSteps(p, steps)
		if f := CheckBound(p, evs); !f.Holds {
			caught++
		}
	}
	if caught == 0 {
		t.Fatal("L1 never caught the bucket that stores stale readings")
	}
	t.Logf("the stale-storing bucket broke L1 in %d of 300 random runs", caught)
}

// In a concurrent history a call may be judged after any call that started
// before it returned: Newest takes the largest reading among those.
func TestNewestConcurrent(t *testing.T) {
	evs := []Event{
		{LoNs: 100, HiNs: 100, CallSeq: 1, RetSeq: 4},
		{LoNs: 300, HiNs: 300, CallSeq: 2, RetSeq: 3},
		{LoNs: 50, HiNs: 50, CallSeq: 5, RetSeq: 6},
		{LoNs: 400, HiNs: 400, CallSeq: 7, RetSeq: 8},
	}
	got := Newest(evs)
	want := []int64{300, 300, 300, 400}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("Newest = %v, want %v", got, want)
		}
	}
}

func TestRanges(t *testing.T) {
	order := []string{"v0.1.0", "v0.2.0", "v0.3.0", "v0.4.0", "v0.5.0"}
	if got := Ranges([]string{"v0.1.0", "v0.2.0", "v0.3.0", "v0.5.0"}, order); got != "v0.1.0–v0.3.0, v0.5.0" {
		t.Fatalf("Ranges = %q", got)
	}
	if got := Ranges([]string{"v0.4.0", "v0.5.0"}, order); got != "v0.4.0, v0.5.0" {
		t.Fatalf("Ranges = %q", got)
	}
}
