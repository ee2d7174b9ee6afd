package target

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/tollgate/tollgate/explore"
	"golang.org/x/time/rate"
)

// The scenarios of golang.org/x/time/rate: a Limiter of one token a
// second with a burst of two, on the virtual clock. The model is the
// library itself run sequentially (each call replayed, in the model's
// order, at the model's time), so a violation is a behaviour no sequential
// order of the same calls has: a concurrency fault only.

type call string

type answer struct {
	OK    bool
	Delay time.Duration
}

type timed struct {
	At time.Time
	C  call
}

func newLimiter() *rate.Limiter { return rate.NewLimiter(rate.Every(time.Second), 2) }

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

func spec(threads [][]call, ticks int) explore.Spec[*rate.Limiter, call, answer, []timed] {
	s := explore.Spec[*rate.Limiter, call, answer, []timed]{
		New:     newLimiter,
		Threads: threads,
		Call:    do,
		Step: func(past []timed, now time.Time, c call) ([]timed, answer) {
			all := append(slices.Clone(past), timed{now, c})
			l := newLimiter()
			var a answer
			for _, x := range all {
				a = doAt(l, x.C, x.At)
			}
			return all, a
		},
	}
	if ticks > 0 {
		s.Clock = &explore.Clock{Ticks: ticks, Tick: time.Second}
	}
	return s
}

// TestAllowStale: one Allow against four, the clock ticking once by a
// second (golang/go#71360: Allow reads the clock before it locks).
func TestAllowStale(t *testing.T) {
	explorations(t, "allow-stale", spec([][]call{{"allow"}, {"allow", "allow", "allow", "allow"}}, 1))
}

// TestReserveStale: the same with Reserve.
func TestReserveStale(t *testing.T) {
	explorations(t, "reserve-stale", spec([][]call{{"reserve"}, {"reserve", "reserve", "reserve", "reserve"}}, 1))
}

// TestAllowFrozen: two Allows against two with the clock standing still:
// the lock alone decides, and it must hold.
func TestAllowFrozen(t *testing.T) {
	explorations(t, "allow-frozen", spec([][]call{{"allow", "allow"}, {"allow", "allow"}}, 0))
}
