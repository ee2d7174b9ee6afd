package counter

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/tollgate/tollgate/explore"
	"github.com/tollgate/tollgate/explore/rt"
	"golang.org/x/time/rate"
)

// call is one operation on a rate.Limiter: Allow, or Reserve (which
// answers whether it may go and how long it must wait).
type call string

type answer struct {
	OK    bool
	Delay time.Duration
}

// limiterSpec explores x/time/rate's Limiter (1 token per second, burst
// 2) from two threads on the virtual clock, which ticks once by a second.
// The model is x/time/rate itself, run sequentially: the calls made so
// far replayed one after another on a fresh limiter, each at the time the
// model's clock shows when it takes effect. So a failure is a behaviour no
// sequential order of the same calls has: a concurrency fault, not a
// disagreement about the rules.
func limiterSpec(threads [][]call) explore.Spec[*rate.Limiter, call, answer, []timed] {
	return explore.Spec[*rate.Limiter, call, answer, []timed]{
		New:     func() *rate.Limiter { return rate.NewLimiter(rate.Every(time.Second), 2) },
		Threads: threads,
		Call:    do,
		Step: func(past []timed, now time.Time, c call) ([]timed, answer) {
			all := append(slices.Clone(past), timed{now, c})
			l := rate.NewLimiter(rate.Every(time.Second), 2)
			var a answer
			for _, x := range all {
				a = doAt(l, x.c, x.at)
			}
			return all, a
		},
		Clock: &explore.Clock{Ticks: 1, Tick: time.Second},
	}
}

type timed struct {
	at time.Time
	c  call
}

func do(l *rate.Limiter, c call) answer {
	switch c {
	case "allow":
		return answer{OK: l.Allow()}
	case "reserve":
		r := l.Reserve()
		if !r.OK() {
			return answer{}
		}
		return answer{OK: true, Delay: r.Delay()}
	}
	panic(fmt.Sprintf("unknown call %q", c))
}

func doAt(l *rate.Limiter, c call, at time.Time) answer {
	if c == "allow" {
		return answer{OK: l.AllowN(at, 1)}
	}
	r := l.ReserveN(at, 1)
	if !r.OK() {
		return answer{}
	}
	return answer{OK: true, Delay: r.DelayFrom(at)}
}

// TestLimiterFrozenClock: with the clock standing still, the limiter's
// lock alone decides, and every schedule within two preemptions agrees
// with the model.
func TestLimiterFrozenClock(t *testing.T) {
	s := limiterSpec([][]call{{"allow", "reserve"}, {"allow", "allow"}})
	s.Clock = nil
	explore.Check(t, s)
}

// TestLimiterStaleReading: Allow reads the clock before it takes the lock
// (golang/go#71360). One preemption between the reading and the lock, with
// the clock moving on meanwhile, lets the stale reading move the limiter's
// time back, and the next call is credited the same second again: four
// calls admitted within a second where the model admits three. The test
// passes when the explorer finds it, and logs the report.
func TestLimiterStaleReading(t *testing.T) {
	if !rt.IsRewritten("golang.org/x/time/rate") {
		t.Fatal("golang.org/x/time/rate is not rewritten: run tollgate explore -pkg . (plain go test cannot see the clock)")
	}
	spec := limiterSpec([][]call{{"allow"}, {"allow", "allow", "allow", "allow"}})
	if explore.Replaying() {
		explore.Check(t, spec) // prints the replayed schedule's trace
		return
	}
	r := explore.Explore(spec, explore.Options{}, "")
	if r.Failure == nil || r.Failure.Preemptions != 1 {
		t.Fatalf("want the stale reading found at one preemption: %s", r.Summary())
	}
	t.Logf("found, at one preemption:\n%s", r.Failure.Report)
}
