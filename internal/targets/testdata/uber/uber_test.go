package target

import (
	"fmt"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/tollgate/tollgate/explore"
	"go.uber.org/ratelimit"
)

// The scenarios of go.uber.org/ratelimit: a limiter of one permission
// per 100 ms without slack, on the virtual clock (the library's own clock
// reads time.Now and sleeps with time.Sleep, both rewritten). Take
// returns the time of the permission it was given; the model is the
// property the library documents: in the order the calls take effect,
// permissions are at least one interval apart.

const per = 100 * time.Millisecond

// spaced accepts a Take whose permission is at least per after the one
// before it in the linearization (the clock's ticks, in the history too,
// change nothing).
var spaced = porcupine.Model{
	Init: func() any { return time.Time{} },
	Step: func(st, in, out any) (bool, any) {
		if _, tick := in.(explore.Tick); tick {
			return true, st
		}
		last, at := st.(time.Time), out.(time.Time)
		if !last.IsZero() && at.Sub(last) < per {
			return false, st
		}
		return true, at
	},
	Equal: func(a, b any) bool { return a.(time.Time).Equal(b.(time.Time)) },
	DescribeOperation: func(in, out any) string {
		if tk, ok := in.(explore.Tick); ok {
			return "tick → " + tk.To.Format("15:04:05.000")
		}
		return fmt.Sprintf("take → %s", out.(time.Time).Format("15:04:05.000"))
	},
}

func spec(threads [][]string, opts ...ratelimit.Option) explore.Spec[ratelimit.Limiter, string, time.Time, struct{}] {
	m := spaced
	return explore.Spec[ratelimit.Limiter, string, time.Time, struct{}]{
		New:     func() ratelimit.Limiter { return ratelimit.New(int(time.Second/per), opts...) },
		Threads: threads,
		Call:    func(l ratelimit.Limiter, _ string) time.Time { return l.Take() },
		Model:   &m,
		Clock:   &explore.Clock{Ticks: 1, Tick: per / 2},
	}
}

// TestTakeWithoutSlack: one Take against two.
func TestTakeWithoutSlack(t *testing.T) {
	explorations(t, "take-without-slack", spec([][]string{{"take"}, {"take", "take"}}, ratelimit.WithoutSlack))
}

// TestTakeThree: three threads, one Take each.
func TestTakeThree(t *testing.T) {
	explorations(t, "take-three", spec([][]string{{"take"}, {"take"}, {"take"}}, ratelimit.WithoutSlack))
}
