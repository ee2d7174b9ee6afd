package tokenbucket_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tollgate/tollgate/impl/tokenbucket"
	"github.com/tollgate/tollgate/model"
)

// fakeTime is an injected clock and sleep for Wait. sleep records d,
// advances the clock by d and then runs during, if set, as if another
// goroutine acted while the waiter slept.
type fakeTime struct {
	now    atomic.Int64
	sleeps []time.Duration
	during func(ctx context.Context, d time.Duration) error
}

func (f *fakeTime) table() *tokenbucket.Table[string] {
	return tokenbucket.New[string](tokenbucket.WithClock(f.now.Load), tokenbucket.WithSleep(f.sleep))
}

func (f *fakeTime) sleep(ctx context.Context, d time.Duration) error {
	f.sleeps = append(f.sleeps, d)
	if len(f.sleeps) > 100 {
		return errors.New("fakeTime: more than 100 sleeps")
	}
	if d <= 0 || d%time.Millisecond != 0 {
		return fmt.Errorf("fakeTime: asked to sleep %v, not a positive whole number of milliseconds", d)
	}
	f.now.Add(d.Milliseconds())
	if f.during != nil {
		return f.during(ctx, d)
	}
	return nil
}

func ms(ws ...int64) []time.Duration {
	out := make([]time.Duration, len(ws))
	for i, w := range ws {
		out[i] = time.Duration(w) * time.Millisecond
	}
	return out
}

// TestWaitSleepsRetryAfter: with nobody else taking, Wait sleeps exactly
// once, for exactly RetryAfterAt's answer at its clock reading (T7, which the
// model's bisection defines), and then takes what TakeAt at that later
// instant would. The fixed cases include rates where the closed form
// ceil(deficit / rate * 1000) is short; the random ones cover many more.
func TestWaitSleepsRetryAfter(t *testing.T) {
	type take struct {
		now  int64
		cost float64
	}
	cases := []struct {
		name  string
		lim   tokenbucket.Limits
		setup []take
		now   int64 // the clock when Wait starts
		cost  float64
		want  int64 // the sleep, in ms
	}{
		{"integer rate", tokenbucket.Limits{Capacity: 1, RefillPerSecond: 200}, []take{{0, 1}}, 0, 1, 5},
		{"the seed's rounding case: ceil says 1093", tokenbucket.Limits{Capacity: 7, RefillPerSecond: 3}, []take{{0, 2}, {350, 6}}, 907, 5, 1094},
		{"rate 0.3/s: ceil(3333.3)", tokenbucket.Limits{Capacity: 10, RefillPerSecond: 0.3}, []take{{0, 10}}, 0, 1, 3334},
		{"rate 1/3 per second", tokenbucket.Limits{Capacity: 3, RefillPerSecond: 1.0 / 3}, []take{{0, 3}}, 0, 1, 3000},
		{"rate 2.5/s, fractional cost, part refilled", tokenbucket.Limits{Capacity: 4, RefillPerSecond: 2.5}, []take{{0, 4}}, 100, 1.75, 600},
		{"rate 0.7/s, a deficit of 7 thousandths", tokenbucket.Limits{Capacity: 2, RefillPerSecond: 0.7}, []take{{0, 1.99}}, 0, 0.017, 10},
		{"clock behind the stored timestamp", tokenbucket.Limits{Capacity: 5, RefillPerSecond: 10}, []take{{1000, 5}}, 900, 1, 200},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var ft fakeTime
			tb := ft.table()
			ml := model.Limits(c.lim)
			var b model.Bucket
			for _, s := range c.setup {
				if _, ok := mustTake(t, tb, s.now, "k", c.lim, s.cost); !ok {
					t.Fatalf("setup take %+v refused", s)
				}
				b, _, _ = model.Take(b, ml, s.cost, s.now)
			}
			if got := model.RetryAfter(b, ml, c.cost, c.now); got != c.want {
				t.Fatalf("the case is stale: the model's retry_after is %d, the case says %d", got, c.want)
			}
			if got, _ := tb.RetryAfterAt(c.now, "k", c.lim, c.cost); got != c.want {
				t.Fatalf("RetryAfterAt = %d, want %d", got, c.want)
			}
			ft.now.Store(c.now)
			rem, err := tb.Wait(context.Background(), "k", c.lim, c.cost)
			if err != nil {
				t.Fatalf("Wait: %v", err)
			}
			if !slices.Equal(ft.sleeps, ms(c.want)) {
				t.Fatalf("slept %v, want exactly [%dms]", ft.sleeps, c.want)
			}
			_, ok, want := model.Take(b, ml, c.cost, c.now+c.want)
			if !ok || rem != want {
				t.Fatalf("Wait left %v, want %v (a take at %d ms; ok %v)", rem, want, c.now+c.want, ok)
			}
		})
	}

	t.Run("random", func(t *testing.T) {
		r := rand.New(rand.NewPCG(17, 19))
		slept := 0
		for i := range 5000 {
			lim := tokenbucket.Limits{Capacity: float64(1 + r.IntN(20)), RefillPerSecond: float64(1+r.IntN(100)) / float64(1+r.IntN(10))}
			ml := model.Limits(lim)
			var ft fakeTime
			tb := ft.table()
			var b model.Bucket
			now := int64(r.IntN(5000))
			for range 1 + r.IntN(3) {
				cost := float64(1+r.IntN(int(lim.Capacity)*4)) / 4
				tb.TakeAt(now, "k", lim, cost)
				b, _, _ = model.Take(b, ml, cost, now)
				now += int64(r.IntN(1500))
			}
			now -= int64(r.IntN(2000)) // sometimes behind the stored timestamp
			cost := float64(1+r.IntN(int(lim.Capacity)*4)) / 4
			w := model.RetryAfter(b, ml, cost, now)
			ft.now.Store(now)
			rem, err := tb.Wait(context.Background(), "k", lim, cost)
			if err != nil {
				t.Fatalf("case %d: Wait: %v", i, err)
			}
			var want []time.Duration
			if w > 0 {
				want, slept = ms(w), slept+1
			}
			if !slices.Equal(ft.sleeps, want) {
				t.Fatalf("case %d: bucket %+v limits %+v cost %v at %d: slept %v, want %v", i, b, lim, cost, now, ft.sleeps, want)
			}
			if _, _, wantRem := model.Take(b, ml, cost, now+w); rem != wantRem {
				t.Fatalf("case %d: Wait left %v, want %v", i, rem, wantRem)
			}
		}
		if slept < 1000 {
			t.Fatalf("only %d of 5000 cases had to wait: the generator misses the point", slept)
		}
	})
}

// TestWaitRechecksAfterWake: another taker empties the bucket while the
// waiter sleeps, so the waiter's first wake finds too few tokens; it sleeps
// again for RetryAfterAt's new answer and only then takes.
func TestWaitRechecksAfterWake(t *testing.T) {
	lim := tokenbucket.Limits{Capacity: 1, RefillPerSecond: 10} // 100 ms a token
	var ft fakeTime
	tb := ft.table()
	mustTake(t, tb, 0, "k", lim, 1)
	var rival []bool
	ft.during = func(ctx context.Context, d time.Duration) error {
		if len(rival) == 0 { // during the first sleep only
			_, ok := mustTake(t, tb, ft.now.Load(), "k", lim, 1)
			rival = append(rival, ok)
		}
		return nil
	}
	rem, err := tb.Wait(context.Background(), "k", lim, 1)
	if err != nil {
		t.Fatalf("Wait: %v", err)
	}
	if !slices.Equal(rival, []bool{true}) {
		t.Fatalf("the rival's take at 100 ms: %v, want admitted", rival)
	}
	if !slices.Equal(ft.sleeps, ms(100, 100)) {
		t.Fatalf("slept %v, want [100ms 100ms]: the wake must re-check", ft.sleeps)
	}
	if rem != 0 || ft.now.Load() != 200 {
		t.Fatalf("Wait left %v at %d ms, want 0 at 200 ms", rem, ft.now.Load())
	}
	if _, ok := mustTake(t, tb, 200, "k", lim, 1); ok {
		t.Fatal("the bucket still held a token after the Wait: the waiter did not take")
	}
}

// TestWaitDeadline: a wait that would pass the context's deadline fails at
// once with ErrWouldExceedDeadline, never sleeps and leaves the bucket as it
// was; one that fits sleeps and takes.
func TestWaitDeadline(t *testing.T) {
	lim := tokenbucket.Limits{Capacity: 5, RefillPerSecond: 1}
	var ft fakeTime
	tb := ft.table()
	mustTake(t, tb, 0, "k", lim, 4.5) // 0.5 left; a cost of 2 waits 1500 ms
	before := mustPeek(t, tb, 0, "k", lim)

	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	rem, err := tb.Wait(ctx, "k", lim, 2)
	if !errors.Is(err, tokenbucket.ErrWouldExceedDeadline) {
		t.Fatalf("Wait = (%v, %v), want ErrWouldExceedDeadline", rem, err)
	}
	if ctx.Err() != nil {
		t.Fatalf("the context expired (%v) before Wait returned: it did not fail at once", ctx.Err())
	}
	t.Logf("error: %v", err)
	if len(ft.sleeps) != 0 {
		t.Fatalf("slept %v before failing", ft.sleeps)
	}
	if after := mustPeek(t, tb, 0, "k", lim); after != before {
		t.Fatalf("peek at 0 ms: %v before, %v after the failed Wait", before, after)
	}
	long, cancelLong := context.WithTimeout(context.Background(), time.Hour)
	defer cancelLong()
	if rem, err := tb.Wait(long, "k", lim, 2); err != nil || rem != 0 {
		t.Fatalf("Wait with an hour to spare = (%v, %v), want (0, nil)", rem, err)
	}
	if !slices.Equal(ft.sleeps, ms(1500)) {
		t.Fatalf("slept %v, want [1.5s]", ft.sleeps)
	}
}

// TestWaitDeadlineAfterRival: the deadline is checked before every sleep,
// not only the first: a rival's take during the first sleep makes the second
// wait pass the deadline, and Wait fails without sleeping again and without
// taking.
func TestWaitDeadlineAfterRival(t *testing.T) {
	lim := tokenbucket.Limits{Capacity: 1, RefillPerSecond: 0.5} // 2 s a token
	var ft fakeTime
	tb := ft.table()
	mustTake(t, tb, 0, "k", lim, 0.5) // a cost of 1 waits 1000 ms
	ft.during = func(ctx context.Context, d time.Duration) error {
		if len(ft.sleeps) == 1 {
			mustTake(t, tb, ft.now.Load(), "k", lim, 1) // leaves 0: 2000 ms more
		}
		return nil
	}
	// Real time does not pass during the injected sleep, so the deadline
	// stays about 1.5 s away: enough for the first wait, not the second.
	ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
	defer cancel()
	_, err := tb.Wait(ctx, "k", lim, 1)
	if !errors.Is(err, tokenbucket.ErrWouldExceedDeadline) {
		t.Fatalf("Wait: %v, want ErrWouldExceedDeadline", err)
	}
	if !slices.Equal(ft.sleeps, ms(1000)) {
		t.Fatalf("slept %v, want only [1s]", ft.sleeps)
	}
	if got := mustPeek(t, tb, 1000, "k", lim); got != 0 {
		t.Fatalf("peek at 1000 ms = %v, want the rival's 0", got)
	}
}

// TestWaitCancelled: a context cancelled during the sleep ends Wait with
// context.Canceled, and nothing is taken although the bucket has refilled
// by then; so does one cancelled before Wait begins, even with tokens to
// spare.
func TestWaitCancelled(t *testing.T) {
	lim := tokenbucket.Limits{Capacity: 2, RefillPerSecond: 4} // 250 ms a token
	for _, sleeperSeesCancel := range []bool{true, false} {
		t.Run(fmt.Sprintf("sleep returns ctx.Err %v", sleeperSeesCancel), func(t *testing.T) {
			var ft fakeTime
			tb := ft.table()
			mustTake(t, tb, 0, "k", lim, 2)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			ft.during = func(ctx context.Context, d time.Duration) error {
				cancel()
				if sleeperSeesCancel {
					return ctx.Err()
				}
				return nil // a sleep that finished just as ctx was cancelled
			}
			rem, err := tb.Wait(ctx, "k", lim, 1)
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("Wait = (%v, %v), want context.Canceled", rem, err)
			}
			if !slices.Equal(ft.sleeps, ms(250)) {
				t.Fatalf("slept %v, want [250ms]", ft.sleeps)
			}
			if got := mustPeek(t, tb, 250, "k", lim); got != 1 {
				t.Fatalf("peek at 250 ms = %v, want 1: the cancelled Wait took", got)
			}
		})
	}
	t.Run("cancelled before the call", func(t *testing.T) {
		var ft fakeTime
		tb := ft.table()
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if rem, err := tb.Wait(ctx, "k", lim, 1); !errors.Is(err, context.Canceled) {
			t.Fatalf("Wait = (%v, %v), want context.Canceled", rem, err)
		}
		if got := mustPeek(t, tb, 0, "k", lim); got != 2 || len(ft.sleeps) != 0 {
			t.Fatalf("peek = %v after sleeps %v, want a full bucket and none", got, ft.sleeps)
		}
	})
}

// TestWaitCancelledRealSleep: the default sleep returns when the context is
// cancelled, long before its timer would fire.
func TestWaitCancelledRealSleep(t *testing.T) {
	tb := tokenbucket.New[string]()
	lim := tokenbucket.Limits{Capacity: 1, RefillPerSecond: 0.001} // 1000 s a token
	if _, ok, err := tb.Take("k", lim, 1); !ok || err != nil {
		t.Fatalf("first take: %v, %v", ok, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := tb.Wait(ctx, "k", lim, 1)
		done <- err
	}()
	time.AfterFunc(20*time.Millisecond, cancel)
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Wait: %v, want context.Canceled", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("Wait did not return within a minute of its context being cancelled")
	}
}

// TestWaitBadInput: T9. Bad limits or cost are refused with an *ArgError
// before anything else: no sleep, no change to the bucket.
func TestWaitBadInput(t *testing.T) {
	good := tokenbucket.Limits{Capacity: 5, RefillPerSecond: 1}
	cases := []struct {
		lim   tokenbucket.Limits
		cost  float64
		field string
	}{
		{tokenbucket.Limits{Capacity: 0, RefillPerSecond: 1}, 1, "capacity"},
		{tokenbucket.Limits{Capacity: math.NaN(), RefillPerSecond: 1}, 1, "capacity"},
		{tokenbucket.Limits{Capacity: 5, RefillPerSecond: math.Inf(1)}, 1, "refill_per_second"},
		{tokenbucket.Limits{Capacity: 5, RefillPerSecond: -1}, 1, "refill_per_second"},
		{good, 0, "cost"},
		{good, math.NaN(), "cost"},
		{good, 6, "cost"}, // more than capacity: it could never be taken
	}
	for _, c := range cases {
		var ft fakeTime
		tb := ft.table()
		mustTake(t, tb, 0, "k", good, 5) // empty, so a valid Wait would sleep
		_, err := tb.Wait(context.Background(), "k", c.lim, c.cost)
		var ae *tokenbucket.ArgError
		if !errors.As(err, &ae) || ae.Field != c.field {
			t.Errorf("Wait(%+v, cost %v) = %v, want an *ArgError for %s", c.lim, c.cost, err, c.field)
			continue
		}
		if len(ft.sleeps) != 0 {
			t.Errorf("Wait(%+v, cost %v) slept %v", c.lim, c.cost, ft.sleeps)
		}
		if got := mustPeek(t, tb, 0, "k", good); got != 0 {
			t.Errorf("Wait(%+v, cost %v) changed the bucket: peek %v", c.lim, c.cost, got)
		}
	}
}

// TestWaitNever: when RetryAfterAt reports Never (a rate so small that the
// wait overflows the clock), Wait fails at once with ErrNever.
func TestWaitNever(t *testing.T) {
	lim := tokenbucket.Limits{Capacity: 1, RefillPerSecond: math.SmallestNonzeroFloat64}
	var ft fakeTime
	tb := ft.table()
	mustTake(t, tb, 0, "k", lim, 1)
	if w, _ := tb.RetryAfterAt(0, "k", lim, 1); w != tokenbucket.Never {
		t.Fatalf("the case is stale: RetryAfterAt = %d, want Never", w)
	}
	_, err := tb.Wait(context.Background(), "k", lim, 1)
	if !errors.Is(err, tokenbucket.ErrNever) {
		t.Fatalf("Wait: %v, want ErrNever", err)
	}
	t.Logf("error: %v", err)
	if len(ft.sleeps) != 0 {
		t.Fatalf("slept %v", ft.sleeps)
	}
	if got := mustPeek(t, tb, 0, "k", lim); got != 0 {
		t.Fatalf("peek = %v, want 0", got)
	}
}

// TestWaitRealClock: the default clock and sleep. Capacity 1 refilling 100
// per second: the first Wait takes at once, the second cannot take before
// the clock has moved 10 ms past the first take's reading, that is 9 ms of
// real time at the least (readings truncate to whole milliseconds). Only
// that lower bound is asserted. The context's 5 s deadline, 500 times the
// wait, is the only upper bound: it ends a sleep that overshoots by a factor
// of a thousand (seconds for milliseconds) or never ends.
func TestWaitRealClock(t *testing.T) {
	tb := tokenbucket.New[string]()
	lim := tokenbucket.Limits{Capacity: 1, RefillPerSecond: 100}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	start := time.Now()
	for i := range 2 {
		rem, err := tb.Wait(ctx, "k", lim, 1)
		if err != nil || rem != 0 {
			t.Fatalf("Wait %d = (%v, %v), want (0, nil)", i+1, rem, err)
		}
	}
	if got := time.Since(start); got < 9*time.Millisecond {
		t.Fatalf("two Waits of one token at 100 per second took %v, less than 9ms", got)
	}
}

// TestWaitConcurrent: 32 goroutines each Wait once on one key of a small,
// fast bucket, on the real clock; all succeed, and the table's clock has
// moved at least as far as T5 requires for 32 admissions: 32 ≤ C + R × Δt /
// 1000 with Δt from a reading before the first Wait to one after the last.
func TestWaitConcurrent(t *testing.T) {
	const n = 32
	lim := tokenbucket.Limits{Capacity: 4, RefillPerSecond: 2000} // 2 tokens a ms
	tb := tokenbucket.New[string]()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var wg sync.WaitGroup
	errs := make(chan error, n)
	begin := make(chan struct{})
	t0 := tokenbucket.MonotonicMs()
	for range n {
		wg.Go(func() {
			<-begin
			if _, err := tb.Wait(ctx, "k", lim, 1); err != nil {
				errs <- err
			}
		})
	}
	close(begin)
	wg.Wait()
	t1 := tokenbucket.MonotonicMs()
	close(errs)
	for err := range errs {
		t.Errorf("Wait: %v", err)
	}
	if bound := lim.Capacity + lim.RefillPerSecond*float64(t1-t0)/1000; n > bound {
		t.Fatalf("%d Waits admitted within %d ms, where T5 allows %v", n, t1-t0, bound)
	}
}
