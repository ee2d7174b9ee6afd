package tokenbucket_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tollgate/tollgate/impl/tokenbucket"
)

// virtualTable is a table on a virtual clock whose sleep advances the clock
// by the time slept and then calls round with the number of sleeps so far.
func virtualTable(round func(n int) error) (*tokenbucket.Table[string], *atomic.Int64, *[]time.Duration) {
	var now atomic.Int64
	var slept []time.Duration
	tab := tokenbucket.New[string](
		tokenbucket.WithClock(now.Load),
		tokenbucket.WithSleep(func(ctx context.Context, d time.Duration) error {
			slept = append(slept, d)
			now.Add(d.Milliseconds())
			if err := round(len(slept)); err != nil {
				return err
			}
			return ctx.Err()
		}))
	return tab, &now, &slept
}

// TestReclaimEvery: on the virtual clock, the loop sleeps interval, then
// reclaims at the table's clock: a key whose bucket is full again by then is
// forgotten, one still refilling is kept; cancelling ctx ends the loop with
// ctx.Err().
func TestReclaimEvery(t *testing.T) {
	lim := tokenbucket.Limits{Capacity: 10, RefillPerSecond: 10} // full 100 ms per token taken
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	tab, now, slept := virtualTable(func(n int) error {
		if n == 2 { // the second sleep: one round has run
			cancel()
		}
		return nil
	})
	tab.TakeAt(0, "gone", lim, 1)  // full again at 100 ms
	tab.TakeAt(0, "busy", lim, 10) // full again at 1000 ms
	err := tab.ReclaimEvery(ctx, lim, 200*time.Millisecond)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("ReclaimEvery after cancel = %v, want context.Canceled", err)
	}
	if want := []time.Duration{200 * time.Millisecond, 200 * time.Millisecond}; len(*slept) != 2 || (*slept)[0] != want[0] || (*slept)[1] != want[1] {
		t.Fatalf("slept %v, want %v", *slept, want)
	}
	if now.Load() != 400 {
		t.Fatalf("clock at %d ms, want 400", now.Load())
	}
	// One round ran, at 200 ms: it forgot "gone" and kept "busy" (2 tokens
	// of 10). A reclaim when both are full forgets what is left: "busy".
	if n, _ := tab.ReclaimAt(1_000_000, lim); n != 1 {
		t.Errorf("after one round at 200 ms, %d buckets left, want 1 (busy)", n)
	}
	if got, _ := tab.PeekAt(200, "busy", lim); got != 10 {
		t.Errorf("busy after the final reclaim holds %v, want a full 10", got)
	}
}

// TestReclaimEveryRefuses: bad limits or interval are refused at once with
// an *ArgError naming the field, before any sleep.
func TestReclaimEveryRefuses(t *testing.T) {
	// A sleep ends the loop, so a refusal that is not made cannot hang.
	tab, _, slept := virtualTable(func(int) error { return errors.New("slept") })
	for _, c := range []struct {
		lim      tokenbucket.Limits
		interval time.Duration
		field    string
	}{
		{tokenbucket.Limits{Capacity: 0, RefillPerSecond: 1}, time.Second, "capacity"},
		{tokenbucket.Limits{Capacity: 1, RefillPerSecond: -1}, time.Second, "refill_per_second"},
		{tokenbucket.Limits{Capacity: 1, RefillPerSecond: 1}, 0, "interval"},
		{tokenbucket.Limits{Capacity: 1, RefillPerSecond: 1}, -time.Second, "interval"},
	} {
		err := tab.ReclaimEvery(context.Background(), c.lim, c.interval)
		var ae *tokenbucket.ArgError
		if !errors.As(err, &ae) || ae.Field != c.field {
			t.Errorf("ReclaimEvery(%+v, %v) = %v, want an *ArgError for %s", c.lim, c.interval, err, c.field)
		}
	}
	if len(*slept) != 0 {
		t.Errorf("a refused ReclaimEvery slept %v", *slept)
	}
}

// TestReclaimEveryRealClock: with the default sleep the loop runs on a
// timer and stops when ctx is done.
func TestReclaimEveryRealClock(t *testing.T) {
	tab := tokenbucket.New[string]()
	lim := tokenbucket.Limits{Capacity: 1, RefillPerSecond: 1000}
	tab.Take("k", lim, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := tab.ReclaimEvery(ctx, lim, time.Millisecond); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("ReclaimEvery = %v, want context.DeadlineExceeded", err)
	}
}
