package tokenbucket

// Wait: a blocking take built from AdmitAt (spec §4, "wait"). It adds no
// shared memory of its own: every word it reads or writes is read or
// written by take and load.

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"
)

// ErrWouldExceedDeadline is returned, wrapped with the wait and the time
// left, by a Wait whose context has a deadline that would pass before the
// bucket covers the cost. Wait returns it at once, without sleeping, as
// x/time/rate's Limiter.WaitN does. Test for it with errors.Is.
var ErrWouldExceedDeadline = errors.New("tokenbucket: wait would exceed the context deadline")

// ErrNever is returned, wrapped with the limits and the cost, by a Wait for
// which RetryAfterAt reports Never: no wait within the clock's range would
// refill the bucket enough, because the refill rate is too small. Wait
// returns it at once. Test for it with errors.Is.
var ErrNever = errors.New("tokenbucket: the bucket would never cover the cost")

// sleepFunc blocks for d, or until ctx is done, whichever comes first; it
// returns nil after a full d and ctx.Err() otherwise.
type sleepFunc func(ctx context.Context, d time.Duration) error

// WithSleep makes Wait and ReclaimEvery block with sleep instead of a timer
// on the real clock. sleep must return nil once d has passed and ctx.Err()
// if ctx is done first; any other error it returns ends the call with that
// error. It is meant for tests that inject a clock with WithClock: a sleep
// that advances that clock by d makes Wait and ReclaimEvery instant and
// deterministic. A nil sleep restores the default.
func WithSleep(sleep func(ctx context.Context, d time.Duration) error) Option {
	return func(c *config) { c.sleep = sleep }
}

// sleepCtx is the default sleep: a timer on the real clock, stopped on every
// return, raced against ctx.
func sleepCtx(ctx context.Context, d time.Duration) error {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Wait blocks until key's bucket covers cost, then takes it and reports the
// tokens remaining (T1): the blocking form of Take, as x/time/rate's
// Limiter.WaitN is of AllowN. cost and the limits are in tokens and tokens
// per second; the waits are whole milliseconds of the table's clock
// (spec/tokenbucket.md §4, wait).
//
// Each round reads the table's clock once and admits at that reading
// (AdmitAt). If the bucket refuses (T2), the refusal's wait, RetryAfterAt's
// answer at the same reading, is the smallest whole number of milliseconds
// after which the take would succeed if nobody else took (T7); Wait sleeps
// that long and tries again.
// Another caller may take the tokens during the sleep, so a waiter can sleep
// more than once. Waiters are not queued: unlike a Limiter, Wait reserves
// nothing while it sleeps, and a busy key may keep a waiter waiting.
//
// Wait fails, and then has taken nothing:
//   - at once with an *ArgError when lim or cost break T9;
//   - with ctx.Err() when ctx is done before the take, including during a
//     sleep;
//   - at once, without sleeping, with an error wrapping
//     ErrWouldExceedDeadline when ctx has a deadline and the wait would end
//     after it (the wait is compared with the time left on the real clock,
//     time.Until, since the table's clock need not be the wall clock);
//   - at once with an error wrapping ErrNever when RetryAfterAt reports
//     Never.
//
// Only the successful take changes the bucket; Wait linearizes at its
// compare-and-swap. Wait is safe for concurrent use by many goroutines; each
// take stays lock-free (T11), only the sleeps block.
func (t *Table[K]) Wait(ctx context.Context, key K, lim Limits, cost float64) (remaining float64, err error) {
	if err := check(lim, cost, true); err != nil {
		return 0, err
	}
	return WaitLoop(ctx, lim, cost, t.Now, func(nowMs int64) (Decision, error) { return t.AdmitAt(nowMs, key, lim, cost) }, t.sleep)
}

// WaitLoop is Wait's loop over any table that answers AdmitAt, for the
// tables kept elsewhere (impl/redis/tokenbucket's Wait is this loop over its
// own AdmitAt): each round reads now once and admits at that reading; a
// refusal sleeps its RetryAfterMs with sleep (nil: a timer on the real
// clock, raced against ctx), or fails as Wait documents
// (ctx done, ErrWouldExceedDeadline, ErrNever). An error of admit ends the
// loop with that error. lim and cost are only named in errors.
func WaitLoop(ctx context.Context, lim Limits, cost float64, now func() int64, admit func(nowMs int64) (Decision, error), sleep func(context.Context, time.Duration) error) (remaining float64, err error) {
	if sleep == nil {
		sleep = sleepCtx
	}
	for {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		d, err := admit(now())
		switch {
		case err != nil:
			return 0, err
		case d.OK:
			return d.Remaining, nil
		case d.RetryAfterMs == Never:
			return 0, fmt.Errorf("%w: capacity %v, refill_per_second %v, cost %v", ErrNever, lim.Capacity, lim.RefillPerSecond, cost)
		}
		if deadline, ok := ctx.Deadline(); ok {
			if left := time.Until(deadline); outlasts(d.RetryAfterMs, left) {
				return 0, fmt.Errorf("%w: the bucket covers cost %v in %d ms, the deadline is %v away", ErrWouldExceedDeadline, cost, d.RetryAfterMs, left)
			}
		}
		if err := sleep(ctx, millis(d.RetryAfterMs)); err != nil {
			return 0, err
		}
	}
}

// outlasts reports whether a wait of w whole milliseconds ends after left
// has passed. w ms > left exactly when w > floor(left / 1 ms), for whole w;
// the division truncates towards zero, which is the floor for left >= 0 and
// keeps every w >= 1 too long for left < 0.
func outlasts(w int64, left time.Duration) bool { return w > int64(left/time.Millisecond) }

// millis converts a wait of w >= 0 milliseconds to a Duration, saturating at
// the largest Duration (about 292 years): a Wait that long sleeps, wakes and
// checks again.
func millis(w int64) time.Duration {
	if w > int64(math.MaxInt64/time.Millisecond) {
		return math.MaxInt64
	}
	return time.Duration(w) * time.Millisecond
}
