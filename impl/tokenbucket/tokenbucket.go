// Package tokenbucket is a keyed, lock-free token bucket with an injectable
// millisecond clock (spec/tokenbucket.md).
//
// A bucket holds at most Capacity tokens and regains RefillPerSecond tokens
// per second; a take of cost tokens succeeds when the bucket covers the cost
// and then removes it. A caller may therefore burst up to Capacity and then
// proceed at the refill rate. The limits are passed on every call, so one
// Table holds buckets of many different limits, one per key.
//
// Every take is committed by a compare-and-swap on the key's bucket word and
// retried, without bound, when another take committed first: losing a race
// never turns into a refusal, and some take always completes (lock-free).
// The stored timestamp never moves backwards, so a caller whose clock reading
// is older than a take that committed first cannot be credited the same
// interval twice (T4, T5).
package tokenbucket

import (
	"fmt"
	"math"

	"github.com/tollgate/tollgate/internal/clock"
	"github.com/tollgate/tollgate/internal/seam"
)

// A bucket word is a 128-bit seam.Pair holding one bucket's whole state, so
// that a take commits tokens and timestamp together with one
// compare-and-swap and allocates nothing:
//
//	(0, 0)                       absent: a new cell no take committed to yet
//	(bits(tokens) | present, last) tokens left after the last committed take,
//	                             and the newest clock reading of any committed
//	                             take (T4), as an int64 in two's complement
//	(deadLo, 0)                  dead: reset (T10) or reclaimed (T12); the
//	                             key's next take makes a new cell
//
// and moves only absent → present, present → present (takes), and any
// state → dead (Reset, ReclaimAt), each by compare-and-swap. So a word never
// returns to absent, and dead is final.
//
// tokens is never negative (have − cost with have ≥ cost is +0 or more), so
// its sign bit is free to mark a present bucket; the float64 itself crosses
// the word bit for bit (T3). deadLo has the sign bit clear, like absent: a
// reader that meets a dead word finds a full bucket in it, and looks for the
// key's live cell instead.
const (
	present = 1 << 63
	deadLo  = 1
)

// packState is the word of a present bucket.
func packState(tokens float64, lastMs int64) (lo, hi uint64) {
	return math.Float64bits(tokens) | present, uint64(lastMs)
}

// Table is a set of token buckets keyed by K. The zero value is not usable;
// create one with New. A Table is safe for concurrent use by many
// goroutines; every method is lock-free.
type Table[K comparable] struct {
	// buckets is the current map. It holds a non-nil trie from New on and
	// moves only by ResetAll's store of a fresh, empty trie (T10).
	buckets seam.Pointer[trie[K]]
	clock   func() int64
	sleep   sleepFunc // WithSleep's function; nil means sleepCtx (wait.go)
	stats
}

// Option configures a Table.
type Option func(*config)

type config struct {
	clock func() int64
	sleep sleepFunc
}

// WithClock makes the table read time from clock, which returns milliseconds
// and should never decrease (the table tolerates one that does: T4). The
// default is MonotonicMs. A nil clock is a defect: WithClock panics, so
// that the mistake shows where the table is made, not in a later Take.
func WithClock(clock func() int64) Option {
	if clock == nil {
		panic("tokenbucket: WithClock(nil): the clock must be a function (defect)")
	}
	return func(c *config) { c.clock = clock }
}

// MonotonicMs is the default clock: milliseconds on the monotonic clock
// since the process started (the same base as credits.MonotonicMs).
func MonotonicMs() int64 { return clock.MonotonicMs() }

// New returns an empty table.
func New[K comparable](opts ...Option) *Table[K] {
	cfg := config{clock: MonotonicMs}
	for _, o := range opts {
		o(&cfg)
	}
	t := &Table[K]{clock: cfg.clock, sleep: cfg.sleep}
	t.buckets.Store(newTrie[K]())
	return t
}

// Now reads the table's clock (WithClock; MonotonicMs by default), in
// milliseconds: the reading every shorthand method takes, for a caller that
// hands one reading to several At methods. A zero Table has no clock, and
// Now panics on one, naming the mistake.
func (t *Table[K]) Now() int64 {
	if t.clock == nil {
		panic(zeroTable)
	}
	return t.clock()
}

// zeroTable is the panic of a method called on a zero Table.
const zeroTable = "tokenbucket: a zero Table is not usable: make one with New (defect)"

// live is the table's current trie. A zero Table has none; its first call
// panics here, naming the mistake, rather than dereferencing nil deep in a
// walk.
func (t *Table[K]) live() *trie[K] {
	tr := t.buckets.Load()
	if tr == nil {
		panic(zeroTable)
	}
	return tr
}

// Admit is shorthand for AdmitAt with the table's clock.
func (t *Table[K]) Admit(key K, lim Limits, cost float64) (Decision, error) {
	return t.AdmitAt(t.Now(), key, lim, cost)
}

// AdmitAt is TakeAt that also answers a refusal's wait, in one call: on a
// refusal, Decision.RetryAfterMs is what RetryAfterAt answers at the same
// reading nowMs, read from the bucket state the refusal was decided on, so
// the caller needs no second call and no clock of its own to tell a client
// when to come back (as redis_rate's Result.RetryAfter does). An *ArgError
// for limits or a cost that break T9 changes nothing.
//
// An admitted take linearizes as TakeAt's does. A refusal linearizes at
// the load its wait is computed from, where the bucket does not cover cost
// at nowMs: if a reset between the refused take and that load made the
// bucket cover it, the take is tried again.
func (t *Table[K]) AdmitAt(nowMs int64, key K, lim Limits, cost float64) (Decision, error) {
	if err := check(lim, cost, true); err != nil {
		return Decision{}, err
	}
	for {
		if left, ok := t.take(key, lim, cost, nowMs, false); ok {
			return Decision{OK: true, Remaining: left}, nil
		}
		lo, hi := t.load(key)
		if w := retryAfter(lo, hi, lim, cost, nowMs); w > 0 {
			return Decision{RetryAfterMs: w}, nil
		}
	}
}

// Take is shorthand for TakeAt with the table's clock, except that the clock
// is read again before every commit attempt, so a lost race never commits
// a stale reading.
func (t *Table[K]) Take(key K, lim Limits, cost float64) (remaining float64, ok bool, err error) {
	if err := check(lim, cost, true); err != nil {
		return 0, false, err
	}
	remaining, ok = t.take(key, lim, cost, t.Now(), true)
	return remaining, ok, nil
}

// TakeAt takes cost tokens from key's bucket at nowMs (T1, T2). It first
// refills the bucket for the milliseconds elapsed since its timestamp (none
// when nowMs is older), then, if the bucket covers cost, removes it and
// reports the tokens remaining with ok set. A key never seen, or reset,
// starts full. A refusal (ok false) leaves the bucket unchanged; so does an
// *ArgError for limits or a cost that break T9.
//
// A key whose bucket a reclaim forgot starts full too, stamped no earlier
// than the newest reclaim's clock (T12).
//
// TakeAt linearizes at its successful compare-and-swap, or for a refusal at
// the load that saw too few tokens.
func (t *Table[K]) TakeAt(nowMs int64, key K, lim Limits, cost float64) (remaining float64, ok bool, err error) {
	if err := check(lim, cost, true); err != nil {
		return 0, false, err
	}
	remaining, ok = t.take(key, lim, cost, nowMs, false)
	return remaining, ok, nil
}

func (t *Table[K]) take(key K, lim Limits, cost float64, nowMs int64, reread bool) (float64, bool) {
	tr := t.live()
	c := tr.insert(key)
	// Two 64-bit loads, cheaper than the 128-bit snapshot; a write between
	// them can pair halves of two states, which the compare-and-swap below
	// rejects (it compares both halves) and a refusal checks first.
	lo, hi := c.word.LoadLo(), c.word.LoadHi()
	for {
		if lo == deadLo {
			// Reset or reclaimed: the bucket lives on in the key's next
			// cell, which this walk finds or makes.
			c = tr.insertHash(key, tr.hash(key))
			lo, hi = c.word.LoadLo(), c.word.LoadHi()
			continue
		}
		have := refill(lo, hi, lim, nowMs)
		if have < cost {
			// A refusal commits nothing to validate it: decide it on one
			// snapshot of the word, where it linearizes.
			if sLo, sHi := c.word.Load(); sLo != lo || sHi != hi {
				lo, hi = sLo, sHi
				continue
			}
			return 0, false // T2: a refusal writes nothing
		}
		last := nowMs
		if lo&present != 0 {
			last = max(last, int64(hi)) // T4: never move the timestamp back
		} else {
			// T12: nor behind the floor of what a reclaim forgot. The floor
			// is read after the word: a reclaim raises it before it kills a
			// cell, so a take that found the key's old cell dead, or made
			// its new cell after the kill, sees the floor of that reclaim;
			// one that loaded this absent word before a reclaim killed it
			// fails its compare-and-swap below.
			last = max(last, tr.floorMs())
		}
		left := have - cost
		nextLo, nextHi := packState(left, last)
		// (lo, hi) → next commits this take, but only if no other take (or
		// reset) committed since the load above, which compared both halves
		// proves; then we recompute. Equal words mean an equal bucket, so
		// a word that changed and changed back is as good as unchanged.
		if c.word.CompareAndSwap(lo, hi, nextLo, nextHi) {
			return left, true
		}
		t.lostRace() // T2: a lost race is retried, never a refusal
		if reread {
			nowMs = t.clock()
		}
		lo, hi = c.word.LoadLo(), c.word.LoadHi()
	}
}

// refill is the T3 formula on the bucket word (lo, hi): min(tokens +
// (float64(elapsed)/1000) * rate, capacity), rounded at every step in that
// order. An absent bucket is full.
func refill(lo, hi uint64, lim Limits, nowMs int64) float64 {
	if lo&present == 0 {
		return lim.Capacity
	}
	tokens := math.Float64frombits(lo &^ present)
	// A full bucket stays full whatever the accrual (which is never
	// negative), so the division is skipped: the min below would return
	// Capacity anyway. With no time elapsed the product is exactly +0 for
	// every valid rate, so many takes within one millisecond skip it too.
	// The conversion rounds the product: no fused multiply-add on any GOARCH.
	var accrued float64
	if e := elapsed(int64(hi), nowMs); e != 0 && tokens < lim.Capacity {
		accrued = float64(float64(e) / 1000 * lim.RefillPerSecond)
	}
	return min(tokens+accrued, lim.Capacity)
}

// Peek is shorthand for PeekAt with the table's clock.
func (t *Table[K]) Peek(key K, lim Limits) (float64, error) {
	return t.PeekAt(t.Now(), key, lim)
}

// PeekAt reports the tokens key's bucket holds at nowMs, refilled for the
// time elapsed but not consumed (T6). It never creates a bucket and never
// changes one; an unseen key holds Capacity.
func (t *Table[K]) PeekAt(nowMs int64, key K, lim Limits) (float64, error) {
	if err := check(lim, 0, false); err != nil {
		return 0, err
	}
	lo, hi := t.load(key)
	return refill(lo, hi, lim, nowMs), nil
}

// load returns key's bucket word, (0, 0) when the key has no live cell. It
// linearizes at the load of a word that is not dead, or at the walk that
// found no live cell.
func (t *Table[K]) load(key K) (lo, hi uint64) {
	tr := t.live()
	for c := tr.find(key); c != nil; c = tr.findLive(key) {
		if lo, hi = c.word.Load(); lo != deadLo {
			return lo, hi
		}
	}
	return 0, 0
}

// RetryAfter is shorthand for RetryAfterAt with the table's clock.
func (t *Table[K]) RetryAfter(key K, lim Limits, cost float64) (int64, error) {
	return t.RetryAfterAt(t.Now(), key, lim, cost)
}

// RetryAfterAt reports how many milliseconds after nowMs a take of cost
// would succeed if nobody else took from the bucket: 0 when the bucket covers
// cost now, otherwise the smallest whole w such that TakeAt(nowMs+w, …)
// succeeds (T7). It changes nothing.
//
// The closed form ceil(deficit / rate * 1000) can be one millisecond short
// after rounding, so the estimate is checked, and corrected, against the
// refill formula itself.
func (t *Table[K]) RetryAfterAt(nowMs int64, key K, lim Limits, cost float64) (int64, error) {
	if err := check(lim, cost, true); err != nil {
		return 0, err
	}
	lo, hi := t.load(key)
	return retryAfter(lo, hi, lim, cost, nowMs), nil
}

// RetryAfterOf is RetryAfterAt's answer for a present bucket holding tokens,
// stamped lastMs, for a table kept elsewhere: impl/redis/tokenbucket reads
// a bucket from its server and answers with it, so the two agree bit for
// bit. The arguments must be valid (CheckArgs).
func RetryAfterOf(tokens float64, lastMs int64, lim Limits, cost float64, nowMs int64) int64 {
	lo, hi := packState(tokens, lastMs)
	return retryAfter(lo, hi, lim, cost, nowMs)
}

// RefillOf is the T3 refill of a present bucket holding tokens, stamped
// lastMs, at nowMs, for a table kept elsewhere: min(tokens + elapsed/1000 ×
// rate, capacity), rounded at every step as this package rounds it
// (impl/etcd/tokenbucket decides its takes with it, so the two agree bit for
// bit). The limits must be valid
// (CheckArgs).
func RefillOf(tokens float64, lastMs int64, lim Limits, nowMs int64) float64 {
	lo, hi := packState(tokens, lastMs)
	return refill(lo, hi, lim, nowMs)
}

// retryAfter is RetryAfterAt's answer for the bucket word (lo, hi).
func retryAfter(lo, hi uint64, lim Limits, cost float64, nowMs int64) int64 {
	have := refill(lo, hi, lim, nowMs)
	if have >= cost {
		return 0
	}
	if w, ok := retryEstimate(lo, hi, lim, nowMs, cost, have); ok {
		return w
	}
	return retrySearch(lo, hi, lim, nowMs, cost)
}

// retryLimit is the largest wait RetryAfterAt can report at nowMs: the
// largest w with nowMs+w representable, and never Never itself.
func retryLimit(nowMs int64) int64 {
	if nowMs > 1 {
		return math.MaxInt64 - nowMs
	}
	return Never - 1
}

// covers reports whether a take of cost from the bucket word (lo, hi) at
// nowMs+w succeeds.
func covers(lo, hi uint64, lim Limits, nowMs int64, cost float64, w int64) bool {
	return refill(lo, hi, lim, nowMs+w) >= cost
}

// retryEstimate is RetryAfterAt's fast path, for a present bucket that
// holds have < cost at nowMs: the closed form ceil(deficit / rate * 1000),
// after the gap a clock behind the stored timestamp waits out first
// (accrual starts at max(nowMs, last)). It is exact or one off in
// rounding, and covers(0) is false, so the answer is the c among est, est+1
// and est-1 with covers(c) && !covers(c-1). ok is false when none is (a
// rate so small or large that est lost all precision): then retrySearch
// decides. Its answer is pinned by tests without the fallback, which would
// hide any error of its own.
func retryEstimate(lo, hi uint64, lim Limits, nowMs int64, cost, have float64) (int64, bool) {
	est := math.Ceil((cost - have) / lim.RefillPerSecond * 1000)
	// A rate so small that est is beyond every clock converts to some
	// value or other (Go leaves it to the implementation), and the sum may
	// wrap: no guard is needed, since only the answer passes the check
	// below, so a wrong candidate is never returned, only missed.
	w := int64(uint64(est) + elapsed(nowMs, int64(hi)))
	limit := retryLimit(nowMs)
	for _, c := range [...]int64{w, w + 1, w - 1} {
		if c >= 1 && c <= limit && covers(lo, hi, lim, nowMs, cost, c) && !covers(lo, hi, lim, nowMs, cost, c-1) {
			return c, true
		}
	}
	return 0, false
}

// retrySearch is RetryAfterAt's answer by bisection over the whole range:
// the least w in [1, retryLimit(nowMs)] with covers(w), or Never when
// there is none. covers is monotone in w, and covers(0) is false.
func retrySearch(lo, hi uint64, lim Limits, nowMs int64, cost float64) int64 {
	limit := retryLimit(nowMs)
	if !covers(lo, hi, lim, nowMs, cost, limit) {
		return Never
	}
	short, enough := int64(0), limit // !covers(short) && covers(enough)
	for enough-short > 1 {
		if mid := short + (enough-short)/2; covers(lo, hi, lim, nowMs, cost, mid) {
			enough = mid
		} else {
			short = mid
		}
	}
	return enough
}

// elapsed is max(now - last, 0) as an exact count of milliseconds: the
// difference of any two int64 values fits in a uint64.
func elapsed(last, now int64) uint64 {
	if now <= last {
		return 0
	}
	return uint64(now) - uint64(last)
}

// Reset forgets key's bucket, so its next take starts from a full one
// (T10), stamped no earlier than the newest reclaim's clock (T12). It
// linearizes at the compare-and-swap that kills the key's cell, or at the
// walk that found no live cell; a take that loaded the word before it fails
// its compare-and-swap and makes the key a new cell.
func (t *Table[K]) Reset(key K) {
	tr := t.live()
	h := tr.hash(key)
	for c := tr.findHash(key, h, lookLive); c != nil; c = tr.findHash(key, h, lookLive) {
		lo, hi := c.word.Load()
		// any → dead: the key has no bucket now. A word that is absent
		// dies too (a reset of an absent bucket changes nothing), so the
		// cell can go.
		if lo != deadLo && c.word.CompareAndSwap(lo, hi, deadLo, 0) {
			tr.tidy(h)
			return
		}
	}
}

// Reclaim is shorthand for ReclaimAt with the table's clock.
func (t *Table[K]) Reclaim(lim Limits) (int, error) {
	return t.ReclaimAt(t.Now(), lim)
}

// ReclaimAt forgets every bucket that is full at nowMs by lim, and whose
// timestamp is not after nowMs, and frees its cell (T12). It returns how
// many buckets it forgot. A key it forgot answers every later call exactly
// as its full bucket would have, except that a take with a clock older than
// nowMs stamps nowMs, where the bucket might have kept an older timestamp:
// every bucket the table makes from then on is stamped no earlier than the
// newest clock any reclaim carried (the floor), so a stale clock can never
// be credited the time a forgotten bucket had already accrued (T4, T5).
//
// The limits are those the keys are taken with (the table stores none,
// T8): a bucket judged with a smaller capacity than its own may be
// forgotten while not full by its own. Invalid limits return an *ArgError
// and change nothing (T9). Call it from time to time, with the table's
// clock, to keep a table of many short-lived keys small: memory then
// follows the keys in use, not every key ever seen (inner trie nodes stay,
// bounded by the most keys held at once).
//
// ReclaimAt is lock-free and linearizable per key, like ResetAll (T11), when
// lim is no smaller in capacity and no larger in rate than the keys' own: it
// raises the floor first, then kills each forgettable bucket with one
// compare-and-swap, where it linearizes for that key, and unlinks its cell.
// A take that committed first keeps its bucket. (With a smaller capacity, a
// take stamped from the new floor can leave a bucket this same reclaim then
// judges full and forgets, which no order of the two explains.)
func (t *Table[K]) ReclaimAt(nowMs int64, lim Limits) (int, error) {
	if err := check(lim, 0, false); err != nil {
		return 0, err
	}
	tr := t.live()
	// Before any kill: a take that finds a killed cell reads the floor
	// after, and must see this clock.
	tr.raiseFloor(nowMs)
	return tr.sweep(nil, tr.root, 0, func(c *cell[K]) bool {
		for {
			lo, hi := c.word.Load()
			switch {
			case lo == deadLo:
				return false
			case lo&present == 0:
				// absent → dead: a new cell no take committed to holds no
				// bucket to forget; its take, if any, fails and makes
				// another cell, which sees the floor.
				if c.word.CompareAndSwap(lo, hi, deadLo, 0) {
					return false
				}
			case int64(hi) > nowMs || refill(lo, hi, lim, nowMs) != lim.Capacity:
				return false // not forgettable: a take newer than nowMs, or not full
			default:
				// present → dead: forgets the full bucket; a take that
				// loaded it fails its compare-and-swap and makes the key a
				// new cell.
				if c.word.CompareAndSwap(lo, hi, deadLo, 0) {
					return true
				}
			}
		}
	}), nil
}

// ResetAll forgets every bucket by replacing the table's map with an empty
// one (T10). Takes that found their cell before the store may still commit
// to the old map; they linearize before ResetAll, whose call they overlap.
func (t *Table[K]) ResetAll() {
	t.buckets.Store(newTrie[K]())
}

// check validates lim and, when withCost is set, cost: capacity first, then
// refill_per_second, then cost (T9).
func check(lim Limits, cost float64, withCost bool) error {
	const finitePositive = "must be finite and greater than zero"
	switch {
	case !(lim.Capacity > 0 && lim.Capacity <= math.MaxFloat64):
		return &ArgError{Field: "capacity", Value: lim.Capacity, Rule: finitePositive}
	case !(lim.RefillPerSecond > 0 && lim.RefillPerSecond <= math.MaxFloat64):
		return &ArgError{Field: "refill_per_second", Value: lim.RefillPerSecond, Rule: finitePositive}
	case !withCost:
		return nil
	case !(cost > 0 && cost <= math.MaxFloat64):
		return &ArgError{Field: "cost", Value: cost, Rule: finitePositive}
	case cost > lim.Capacity:
		return &ArgError{Field: "cost", Value: cost, Rule: fmt.Sprintf("must not exceed capacity %v, or it could never be taken", lim.Capacity)}
	}
	return nil
}

// exportPairInline is never called: it makes this package's export data
// carry the inline bodies of seam.Pair's methods, so that they inline into
// every instantiation of the tables (see seam.Pair).
func exportPairInline(p *seam.Pair) {
	p.Load()
	p.LoadLo()
	p.LoadHi()
	p.Store(0, 0)
	p.CompareAndSwap(0, 0, 0, 0)
	p.CompareAndSwapLo(0, 0)
}

var _ = exportPairInline
