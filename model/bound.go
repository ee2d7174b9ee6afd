package model

import (
	"fmt"
	"math"
)

// T5Tolerance is the relative slack on the T5 bound for floating-point
// rounding (spec/tokenbucket.md, "T5's rounding slack"): a check fails only
// when the admitted cost exceeds the bound by more than this fraction of it
// plus the absolute T5Bound.Slack.
const T5Tolerance = 1e-9

// T5Bound follows one key between resets and states the bound of T5:
// admitted ≤ C + R × (t_max − t_min) / 1000, where C and R are the largest
// capacity and rate a committed take passed, t_min is the clock of the take
// that created the bucket and t_max the newest clock a committed take (or a
// reclaim, T12) carried. The zero value is a key with no committed take; Reset returns to
// it.
//
// Only committed takes count, for the clock as for the rest. Tokens accrue
// from the stored timestamp, which is the newest clock a committed take
// carried (T4), to the clock of the take that uses them, which then becomes
// the stored timestamp if it is newer. A refused take, a peek or a
// retry_after stores nothing (T2, T6, T7): a newer clock they carried
// credits no token until a take at that clock commits, and that take moves
// t_max itself. Counting them would only widen the bound, by as much as the
// newest reading of a peek happens to be, and hide a stale-clock fault
// behind it.
//
// Exceeded allows for the rounding of §3: a relative T5Tolerance, and an
// absolute Slack of half of 2^-1074 for every take credited time
// (Accruals), rounded down to whole steps, which gradual underflow needs;
// spec/tokenbucket.md, "T5's rounding slack", shows that the table's own
// arithmetic stays within both.
type T5Bound struct {
	Admitted float64 // total cost of the committed takes
	Capacity float64 // the largest capacity a committed take passed
	Rate     float64 // the largest refill_per_second a committed take passed
	FirstMs  int64   // the clock of the take that created the bucket (t_min)
	NewestMs int64   // the newest clock a committed take carried (t_max)
	Takes    int     // committed takes

	// Accruals counts the committed takes after the first that can have
	// been credited time: those whose clock, or the clock of a reclaim
	// since the take before, is newer than every earlier committed take's.
	// Each of them rounded one accrual (Slack); every other take was
	// credited nothing.
	Accruals     int
	NewestTakeMs int64 // the newest clock a committed take carried (NewestMs counts reclaims too)
	reclaimAhead bool  // a reclaim since the last take was newer than NewestTakeMs
}

// Commit records a take that committed (the implementation answered ok).
func (b *T5Bound) Commit(lim Limits, cost float64, nowMs int64) {
	switch {
	case b.Takes == 0:
		b.FirstMs, b.NewestMs, b.NewestTakeMs = nowMs, nowMs, nowMs
	case nowMs > b.NewestTakeMs || b.reclaimAhead:
		b.Accruals++
	}
	b.reclaimAhead = false
	b.Takes++
	b.Admitted += cost
	b.Capacity = max(b.Capacity, lim.Capacity)
	b.Rate = max(b.Rate, lim.RefillPerSecond)
	b.NewestMs = max(b.NewestMs, nowMs)
	b.NewestTakeMs = max(b.NewestTakeMs, nowMs)
}

// Reclaim records a reclaim at nowMs with lim (T12). With a capacity at
// least C and a rate at most R, the reclaim forgets the bucket only when it
// is full by the key's own limits, so the tokens it gives back are ones the
// bound already allows; its clock becomes the floor the key's next bucket is
// stamped from, so it counts as a reading the table stored: it moves t_max
// when it is newer. A reclaim with a smaller capacity or a larger rate may
// forget a bucket that was not full, as a reset would: the bound starts
// again (Reset).
func (b *T5Bound) Reclaim(lim Limits, nowMs int64) {
	switch {
	case b.Takes == 0:
	case lim.Capacity < b.Capacity || lim.RefillPerSecond > b.Rate:
		b.Reset()
	default:
		b.NewestMs = max(b.NewestMs, nowMs)
		// A reclaim that forgets the bucket credits it the time from its
		// timestamp to the reclaim's clock, in the accrual its Refill
		// rounds, and the next take, which finds it absent, none.
		b.reclaimAhead = b.reclaimAhead || nowMs > b.NewestTakeMs
	}
}

// Reset forgets everything: the key was reset (T10), and the bound starts
// again with the next committed take.
func (b *T5Bound) Reset() { *b = T5Bound{} }

// SpanMs is t_max − t_min, exactly (the newest clock is never older than the
// first, so the unsigned difference cannot overflow).
func (b *T5Bound) SpanMs() uint64 { return ElapsedMs(b.FirstMs, b.NewestMs) }

// Limit is the bound C + R × (t_max − t_min) / 1000 for the takes recorded
// so far. The product is rounded before the sum (the explicit conversion),
// as in Refill: no fused multiply-add on any GOARCH, so the bound is the
// same bits everywhere.
func (b *T5Bound) Limit() float64 {
	return b.Capacity + float64(float64(b.SpanMs())/1000*b.Rate)
}

// Slack is the absolute slack on the bound: floor((Accruals+1)/2) ×
// 2^-1074. An accrual below 2^-1022 is rounded to the grid of 2^-1074 and
// can gain up to half a step the exact bound does not have; Limit rounds
// its own product the same way, losing up to half a step; and the admitted
// total and the computed bound are both multiples of 2^-1074, so the
// Accruals+1 halves round down to whole steps (spec/tokenbucket.md, "T5's
// rounding slack"). The value is exact: an integer below 2^53 times 2^-1074.
//
// The product is rounded on its own (the explicit conversion), so that no
// GOARCH fuses it into the sum of Exceeded.
func (b *T5Bound) Slack() float64 {
	return float64(float64(b.slackSteps()) * math.SmallestNonzeroFloat64)
}

// slackSteps is Slack in steps of 2^-1074.
func (b *T5Bound) slackSteps() int { return (b.Accruals + 1) / 2 }

// Exceeded reports whether the admitted cost is over the bound by more than
// the relative tolerance T5Tolerance and the absolute Slack. The product is
// rounded before the sum, as in Limit.
func (b *T5Bound) Exceeded() bool {
	return b.Admitted > float64(b.Limit()*(1+T5Tolerance))+b.Slack()
}

// String describes the admitted cost and the bound it is held to, and the
// absolute slack when it is larger than the relative tolerance (at
// magnitudes near 2^-1074).
func (b *T5Bound) String() string {
	s := fmt.Sprintf("admitted %v in %d takes since the bucket was created at %d ms, bound is %v (capacity %v + rate %v × %d ms)",
		b.Admitted, b.Takes, b.FirstMs, b.Limit(), b.Capacity, b.Rate, b.SpanMs())
	if slack := b.Slack(); slack > b.Limit()*T5Tolerance {
		s += fmt.Sprintf(" + rounding slack %v (%d × 2^-1074 for %d accruals)", slack, b.slackSteps(), b.Accruals)
	}
	return s
}
