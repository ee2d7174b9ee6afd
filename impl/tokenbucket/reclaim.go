package tokenbucket

// ReclaimEvery: the loop that calls ReclaimAt from time to time, which
// every table of short-lived keys needs. It adds no shared memory of its
// own: every word it writes, ReclaimAt writes.

import (
	"context"
	"time"
)

// ReclaimEvery forgets, every interval until ctx is done, the buckets that
// are full at the table's clock by lim (ReclaimAt, T12), so the keys that
// went away stop holding memory; a key that comes back starts from a full
// bucket, as it would have anyway. It blocks: run it in a goroutine of its
// own, with the limits the keys are taken with (see ReclaimAt for what a
// smaller capacity does), and cancel ctx to stop it.
//
// ReclaimEvery returns at once, having reclaimed nothing, an *ArgError when
// lim breaks T9 or interval is not positive; otherwise it returns ctx.Err()
// when ctx is done. It sleeps with the table's sleep (WithSleep; a timer on
// the real clock by default), so a test that injects a clock and a sleep
// that advances it drives the loop without waiting.
//
// What it costs: each round is one ReclaimAt, a walk of the whole trie that
// loads every live key's bucket word (one 128-bit load) and kills each full
// one with a compare-and-swap, so its time grows with the keys held:
// BenchmarkReclaimWalk measured 0.4–0.7 µs per key held on a shared 2-core
// machine (40–70 ms of one core per round for 100,000 keys). It takes no
// lock: takes of other keys go on during the walk, and a take that loses
// the race for a key the walk kills finds the key's new bucket full. Between
// rounds it holds one timer. Choose interval from the memory a gone key may
// hold until then: a key is forgotten no sooner than its bucket is full
// again, Capacity/RefillPerSecond seconds after its last take at most, and
// no later than one interval after that.
func (t *Table[K]) ReclaimEvery(ctx context.Context, lim Limits, interval time.Duration) error {
	if err := check(lim, 0, false); err != nil {
		return err
	}
	if interval <= 0 {
		return &ArgError{Field: "interval", Value: interval.Seconds(), Rule: "must be > 0 (seconds)"}
	}
	t.live() // a zero Table panics here, naming the mistake, not in a later round
	sleep := t.sleep
	if sleep == nil {
		sleep = sleepCtx
	}
	for {
		if err := sleep(ctx, interval); err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		// lim was checked above: ReclaimAt cannot fail on it.
		_, _ = t.ReclaimAt(t.Now(), lim)
	}
}
