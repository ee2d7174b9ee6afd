package model

import (
	"fmt"
	"math"
)

// Limits are the per-call limits of a token bucket (spec/tokenbucket.md §2).
// Capacity is the burst size in tokens; RefillPerSecond is the number of
// tokens regained per second of clock time. Both must be finite and > 0.
type Limits struct {
	Capacity        float64
	RefillPerSecond float64
}

// Bucket is the state of one key (spec/tokenbucket.md §1). The zero value is
// an absent bucket of a table never reclaimed: one that was never taken
// from, or was reset. An absent bucket behaves as a full one whose timestamp
// is the caller's clock, or the floor when that is newer (T12).
type Bucket struct {
	Present bool
	Tokens  float64 // tokens left after the last committed take
	LastMs  int64   // newest clock reading any committed take carried (T4)

	// Floored is set once a reclaim has run on the table; FloorMs is then
	// the newest clock any reclaim carried (T12). Every key of a table has
	// the same floor, present or not; it matters only while the bucket is
	// absent, when a take stamps max(now, FloorMs).
	Floored bool
	FloorMs int64
}

// floor is the timestamp an absent bucket takes from: FloorMs, or the
// smallest int64 when no reclaim ran (then max(now, floor) is now).
func (b Bucket) floor() int64 {
	if !b.Floored {
		return math.MinInt64
	}
	return b.FloorMs
}

// raiseFloor is b with its floor raised to nowMs, as a reclaim at nowMs
// leaves every key (T12).
func (b Bucket) raiseFloor(nowMs int64) Bucket {
	if !b.Floored || nowMs > b.FloorMs {
		b.Floored, b.FloorMs = true, nowMs
	}
	return b
}

// Forgettable reports whether a reclaim at nowMs with lim forgets b (T12): b
// is present, its timestamp is not after nowMs, and it is full at nowMs
// (Refill returns lim.Capacity). Forgetting it then changes no answer to a
// take at nowMs or later, and the floor keeps a stale take from stamping
// an older time than the bucket had.
func Forgettable(b Bucket, lim Limits, nowMs int64) bool {
	return b.Present && b.LastMs <= nowMs && Refill(b, lim, nowMs) == lim.Capacity
}

// Reclaim is one key's part of a reclaim at nowMs with lim (T12): the floor
// rises to nowMs if that is newer, and a Forgettable bucket becomes absent.
// forgot reports the latter. Limits must be valid (CheckLimits without a
// cost); Reclaim does not check them.
func Reclaim(b Bucket, lim Limits, nowMs int64) (next Bucket, forgot bool) {
	forgot = Forgettable(b, lim, nowMs)
	if forgot {
		b = Bucket{Floored: b.Floored, FloorMs: b.FloorMs}
	}
	return b.raiseFloor(nowMs), forgot
}

// Field names used in ArgError, as the protocol spells them.
const (
	FieldCapacity        = "capacity"
	FieldRefillPerSecond = "refill_per_second"
	FieldCost            = "cost"
)

// Rules used in ArgError (T9).
const (
	RulePositiveFinite = "must be finite and > 0"
	RuleCostCapacity   = "must not exceed capacity (it could never be taken)"
)

// ArgError reports an argument that breaks a rule of T9. Field is one of the
// Field… constants and Rule one of the Rule… constants.
type ArgError struct {
	Field string
	Value float64
	Rule  string
}

func (e *ArgError) Error() string {
	return fmt.Sprintf("model: %s %v %s", e.Field, e.Value, e.Rule)
}

// CheckLimits validates the limits and, when withCost is true, the cost, in
// the order capacity, refill_per_second, cost (T9). It returns the first
// violation, or nil.
func CheckLimits(lim Limits, cost float64, withCost bool) *ArgError {
	if !positiveFinite(lim.Capacity) {
		return &ArgError{FieldCapacity, lim.Capacity, RulePositiveFinite}
	}
	if !positiveFinite(lim.RefillPerSecond) {
		return &ArgError{FieldRefillPerSecond, lim.RefillPerSecond, RulePositiveFinite}
	}
	if !withCost {
		return nil
	}
	if !positiveFinite(cost) {
		return &ArgError{FieldCost, cost, RulePositiveFinite}
	}
	if cost > lim.Capacity {
		return &ArgError{FieldCost, cost, RuleCostCapacity}
	}
	return nil
}

func positiveFinite(x float64) bool { return x > 0 && x <= math.MaxFloat64 }

// ElapsedMs is max(now - last, 0) computed exactly over the whole int64 range
// (T3): the difference of two int64 values always fits in a uint64.
func ElapsedMs(lastMs, nowMs int64) uint64 {
	if nowMs <= lastMs {
		return 0
	}
	return uint64(nowMs) - uint64(lastMs)
}

// Refill is the number of tokens the bucket holds at nowMs before any take
// (T3): min(tokens + (float64(elapsed) / 1000) * refill_per_second, capacity),
// every step rounded to binary64 in that order. An absent bucket holds
// capacity.
func Refill(b Bucket, lim Limits, nowMs int64) float64 {
	if !b.Present {
		return lim.Capacity
	}
	// The explicit conversion rounds the product, so no architecture may
	// fuse it with the addition below (Go spec, "Arithmetic operators").
	accrued := float64(float64(ElapsedMs(b.LastMs, nowMs)) / 1000 * lim.RefillPerSecond)
	return min(b.Tokens+accrued, lim.Capacity)
}

// Take removes cost tokens at nowMs if the refilled bucket covers them
// (T1, T2, T4). On success the new bucket holds refilled-cost tokens and its
// timestamp becomes max(last, now), or for an absent bucket max(floor, now)
// (T12); on refusal the bucket is returned unchanged. Limits must be valid
// (CheckLimits); Take does not check them.
func Take(b Bucket, lim Limits, cost float64, nowMs int64) (next Bucket, ok bool, remaining float64) {
	have := Refill(b, lim, nowMs)
	if have < cost {
		return b, false, 0
	}
	last := nowMs
	switch {
	case b.Present && b.LastMs > nowMs:
		last = b.LastMs // T4: the stored timestamp never moves backwards
	case !b.Present && b.floor() > nowMs:
		last = b.floor() // T12: nor behind the floor of what was forgotten
	}
	next = Bucket{Present: true, Tokens: have - cost, LastMs: last, Floored: b.Floored, FloorMs: b.FloorMs}
	return next, true, next.Tokens
}

// Never is the RetryAfter answer when no wait w ≤ math.MaxInt64 - 1 with
// nowMs + w ≤ math.MaxInt64 refills the bucket enough (T7). Real waits stop
// one short of it, so the answer is never ambiguous.
const Never = math.MaxInt64

// RetryAfter is the smallest whole number of milliseconds w ≥ 0 such that a
// take of cost at nowMs + w succeeds when nobody else takes (T7). It is 0
// exactly when a take at nowMs would succeed, and Never when no w ≤
// math.MaxInt64 - 1 with nowMs + w ≤ math.MaxInt64 works.
//
// The model finds w by bisection over the refill formula itself, which is
// monotone in the clock; it never uses the closed-form estimate, so it is the
// definition and not an approximation of it.
func RetryAfter(b Bucket, lim Limits, cost float64, nowMs int64) int64 {
	covers := func(w int64) bool { return Refill(b, lim, nowMs+w) >= cost }
	if covers(0) {
		return 0
	}
	hi := int64(Never - 1) // the largest real wait; Never is never one
	if nowMs > 1 {
		hi = math.MaxInt64 - nowMs // the largest w with nowMs + w representable
	}
	if !covers(hi) {
		return Never
	}
	lo := int64(0) // invariant: !covers(lo) && covers(hi)
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		if covers(mid) {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi
}

// Admit is take that answers a refusal's wait from the same state: on a
// refusal, RetryAfterMs is RetryAfter of the bucket that refused, at the
// same nowMs (T7; at least 1, since the bucket does not cover cost then,
// or Never). The bucket changes as Take changes it. Limits must be valid.
func Admit(b Bucket, lim Limits, cost float64, nowMs int64) (Bucket, TBOutput) {
	next, ok, rem := Take(b, lim, cost, nowMs)
	if ok {
		return next, TBOutput{OK: true, Remaining: rem}
	}
	return b, TBOutput{RetryAfterMs: RetryAfter(b, lim, cost, nowMs)}
}

// TBKind names a token-bucket operation.
type TBKind uint8

// The token-bucket operations.
const (
	TBTake TBKind = iota + 1
	TBPeek
	TBRetryAfter
	TBReset
	TBResetAll
	TBReclaim
	// TBAdmit is take that answers a refusal's wait in the same call
	// (Admit; spec/tokenbucket.md, admit).
	TBAdmit
)

var tbKindNames = [...]string{TBTake: "take", TBPeek: "peek", TBRetryAfter: "retry_after", TBReset: "reset", TBResetAll: "reset_all", TBReclaim: "reclaim", TBAdmit: "admit"}

func (k TBKind) String() string {
	if int(k) < len(tbKindNames) && tbKindNames[k] != "" {
		return tbKindNames[k]
	}
	return fmt.Sprintf("TBKind(%d)", uint8(k))
}

// TBInput is one token-bucket operation with all of its arguments. Fields an
// operation does not use are ignored (Cost by peek and reclaim; Key by
// reclaim; everything but Key by reset; everything by reset_all).
type TBInput[K comparable] struct {
	Kind   TBKind
	Key    K
	Limits Limits
	Cost   float64
	NowMs  int64
}

// TBOutput is what an operation returns. Invalid is the field named by the
// ArgError when the arguments were refused (and then nothing else is set);
// Remaining is set by a successful take or admit, Tokens by peek,
// RetryAfterMs by retry_after and by a refused admit, Reclaimed (the number of buckets forgotten) by reclaim.
type TBOutput struct {
	Invalid      string
	OK           bool
	Remaining    float64
	Tokens       float64
	RetryAfterMs int64
	Reclaimed    int
}

// Equal compares two outputs field by field, floats bit for bit (T3), so
// -0 differs from 0 and a NaN equals the same NaN.
func (o TBOutput) Equal(u TBOutput) bool {
	bits := math.Float64bits
	return o.Invalid == u.Invalid && o.OK == u.OK && o.RetryAfterMs == u.RetryAfterMs &&
		bits(o.Remaining) == bits(u.Remaining) && bits(o.Tokens) == bits(u.Tokens) &&
		o.Reclaimed == u.Reclaimed
}

// TBTable is a whole token-bucket table: one Bucket per key, and the floor
// every key shares (T12). It is a value: Step never changes the receiver.
// The zero value is an empty table.
type TBTable[K comparable] struct {
	buckets map[K]Bucket // never mutated after construction; floors not kept
	floor   Bucket       // only its Floored and FloorMs are used
}

// Bucket returns the bucket of key, with the table's floor.
func (t TBTable[K]) Bucket(key K) Bucket {
	b := t.buckets[key]
	b.Floored, b.FloorMs = t.floor.Floored, t.floor.FloorMs
	return b
}

// Len is the number of present buckets.
func (t TBTable[K]) Len() int { return len(t.buckets) }

// Equal reports whether two tables hold the same buckets and floor, bit for
// bit.
func (t TBTable[K]) Equal(u TBTable[K]) bool {
	if len(t.buckets) != len(u.buckets) || !BucketEqual(t.floor, u.floor) {
		return false
	}
	for k, b := range t.buckets {
		if !BucketEqual(b, u.buckets[k]) {
			return false
		}
	}
	return true
}

// BucketEqual compares two buckets, tokens bit for bit.
func BucketEqual(a, b Bucket) bool {
	return a.Present == b.Present && a.LastMs == b.LastMs &&
		math.Float64bits(a.Tokens) == math.Float64bits(b.Tokens) &&
		a.Floored == b.Floored && a.FloorMs == b.FloorMs
}

// StepBucket applies one operation to the bucket of its key. Reset leaves
// the absent bucket with the table's floor; ResetAll leaves the zero Bucket
// (a new table, never reclaimed). A reclaim is one key's part of it
// (Reclaim): its output counts 1 when it forgot this bucket. It is the
// function porcupine's per-key partitions step with.
func StepBucket[K comparable](b Bucket, in TBInput[K]) (Bucket, TBOutput) {
	switch in.Kind {
	case TBReset:
		return Bucket{Floored: b.Floored, FloorMs: b.FloorMs}, TBOutput{OK: true}
	case TBResetAll:
		return Bucket{}, TBOutput{OK: true}
	case TBReclaim:
		if err := CheckLimits(in.Limits, 0, false); err != nil {
			return b, TBOutput{Invalid: err.Field}
		}
		next, forgot := Reclaim(b, in.Limits, in.NowMs)
		out := TBOutput{OK: true}
		if forgot {
			out.Reclaimed = 1
		}
		return next, out
	case TBTake, TBPeek, TBRetryAfter, TBAdmit:
	default:
		panic(fmt.Sprintf("model: unknown token-bucket operation %d", in.Kind))
	}
	if err := CheckLimits(in.Limits, in.Cost, in.Kind != TBPeek); err != nil {
		return b, TBOutput{Invalid: err.Field}
	}
	switch in.Kind {
	case TBTake:
		next, ok, rem := Take(b, in.Limits, in.Cost, in.NowMs)
		return next, TBOutput{OK: ok, Remaining: rem}
	case TBAdmit:
		next, out := Admit(b, in.Limits, in.Cost, in.NowMs)
		return next, out
	case TBPeek:
		return b, TBOutput{OK: true, Tokens: Refill(b, in.Limits, in.NowMs)}
	default:
		return b, TBOutput{OK: true, RetryAfterMs: RetryAfter(b, in.Limits, in.Cost, in.NowMs)}
	}
}

// Step applies one operation to the table and returns the new table. A
// reclaim steps every key at once: every bucket and the floor together.
func (t TBTable[K]) Step(in TBInput[K]) (TBTable[K], TBOutput) {
	switch in.Kind {
	case TBResetAll:
		return TBTable[K]{}, TBOutput{OK: true}
	case TBReclaim:
		return t.reclaim(in)
	}
	old := t.Bucket(in.Key)
	_, present := t.buckets[in.Key]
	b, out := StepBucket(old, in)
	if BucketEqual(b, old) {
		return t, out
	}
	next := make(map[K]Bucket, len(t.buckets)+1)
	for k, v := range t.buckets {
		next[k] = v
	}
	if b.Present {
		b.Floored, b.FloorMs = false, 0 // the table keeps the floor
		next[in.Key] = b
	} else if present {
		delete(next, in.Key)
	}
	return TBTable[K]{buckets: next, floor: t.floor}, out
}

// reclaim is Step for a reclaim: its floor step, then its step of every
// present bucket (a key with no bucket has nothing to forget).
func (t TBTable[K]) reclaim(in TBInput[K]) (TBTable[K], TBOutput) {
	if err := CheckLimits(in.Limits, 0, false); err != nil {
		return t, TBOutput{Invalid: err.Field}
	}
	// ReclaimKey of every key at once: one copy of the map, not one a key.
	next := TBTable[K]{buckets: make(map[K]Bucket, len(t.buckets)), floor: t.ReclaimFloor(in.NowMs).floor}
	out := TBOutput{OK: true}
	for k, b := range t.buckets {
		if Forgettable(b, in.Limits, in.NowMs) {
			out.Reclaimed++
			continue
		}
		next.buckets[k] = b
	}
	return next, out
}

// A reclaim seen concurrently (spec/tokenbucket.md T11, T12) is not one
// step but several, each at its own instant inside the reclaim's call:
// first ReclaimFloor, then ReclaimKey once for every key, in any order and
// between any other operations on other keys (and on that key, before or
// after its step), but no reset_all falls between its first step and its
// last; its count is the number of its ReclaimKey steps that forgot. Run
// with nothing in between, the steps are Step's reclaim. Limits are valid
// (CheckLimits without a cost): neither checks them.

// ReclaimFloor is a reclaim's first step: the table's floor rises to nowMs
// if that is newer (T12). No bucket changes.
func (t TBTable[K]) ReclaimFloor(nowMs int64) TBTable[K] {
	return TBTable[K]{buckets: t.buckets, floor: t.floor.raiseFloor(nowMs)}
}

// ReclaimKey is a reclaim's step of one key: the key's bucket is forgotten
// when it is Forgettable at nowMs by lim, and forgot says so. The floor does
// not move (ReclaimFloor raised it).
func (t TBTable[K]) ReclaimKey(key K, lim Limits, nowMs int64) (next TBTable[K], forgot bool) {
	b, present := t.buckets[key]
	if !present || !Forgettable(b, lim, nowMs) {
		return t, false
	}
	next = TBTable[K]{buckets: make(map[K]Bucket, len(t.buckets)-1), floor: t.floor}
	for k, v := range t.buckets {
		if k != key {
			next.buckets[k] = v
		}
	}
	return next, true
}
