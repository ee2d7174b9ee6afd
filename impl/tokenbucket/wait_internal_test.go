package tokenbucket

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestWaitDeadlineBoundary pins Wait's deadline check on its boundary, where
// the real clock (time.Until) would move under the test: with the time left
// replaced by an exact figure, a wait of w ms sleeps when exactly w ms are
// left and refuses, without sleeping, when a nanosecond less is.
func TestWaitDeadlineBoundary(t *testing.T) {
	for _, tc := range []struct {
		w     int64         // the wait the bucket needs, ms
		left  time.Duration // the time left before the deadline
		sleep bool
	}{
		{w: 1, left: time.Millisecond, sleep: true},
		{w: 1, left: time.Millisecond - 1, sleep: false},
		{w: 3, left: 3 * time.Millisecond, sleep: true},
		{w: 3, left: 3*time.Millisecond - 1, sleep: false},
		{w: 3, left: 4*time.Millisecond - 1, sleep: true},
	} {
		var now int64
		var slept []time.Duration
		tb := New[string](WithClock(func() int64 { return now }), WithSleep(func(_ context.Context, d time.Duration) error {
			slept = append(slept, d)
			now += d.Milliseconds()
			return nil
		}))
		// The deadline is an hour ahead on the real clock, so the context
		// does not expire; Wait sees only the time left that until gives.
		wall := time.Now().Add(time.Hour)
		tb.until = func(d time.Time) time.Duration { return d.Sub(wall) }
		// An emptied bucket of capacity w, refilling a token a millisecond,
		// covers a cost of w after w ms.
		cost := float64(tc.w)
		lim := Limits{Capacity: cost, RefillPerSecond: 1000}
		if _, ok, err := tb.TakeAt(0, "k", lim, cost); !ok || err != nil {
			t.Fatalf("the first take failed: %v, %v", ok, err)
		}
		ctx, cancel := context.WithDeadline(context.Background(), wall.Add(tc.left))
		_, err := tb.Wait(ctx, "k", lim, cost)
		cancel()
		switch {
		case tc.sleep && (err != nil || len(slept) != 1 || slept[0] != time.Duration(tc.w)*time.Millisecond):
			t.Errorf("wait of %d ms with %v left: err %v after sleeps %v; want one sleep of %d ms, then the take", tc.w, tc.left, err, slept, tc.w)
		case !tc.sleep && (!errors.Is(err, ErrWouldExceedDeadline) || len(slept) != 0):
			t.Errorf("wait of %d ms with %v left: err %v after sleeps %v; want ErrWouldExceedDeadline at once", tc.w, tc.left, err, slept)
		}
	}
}
