package tokenbucket

// The value types of the table's API. They hold no shared memory; every
// word that goroutines share is in tokenbucket.go and trie.go.

import (
	"fmt"
	"math"
)

// Limits are the limits of one bucket, passed on every call and never stored
// as configuration (T8). Capacity is the burst size in tokens;
// RefillPerSecond is the number of tokens regained per second of clock time.
// Both must be finite and greater than zero. The zero value is not valid.
//
// The caller owns the limits of a key and should pass the same ones each
// time; a smaller Capacity on a later call clamps the tokens that call sees.
type Limits struct {
	Capacity        float64
	RefillPerSecond float64
}

// ArgError reports an argument that breaks a rule (T9). A call that returns
// one has changed nothing.
type ArgError struct {
	Field string  // "capacity", "refill_per_second" or "cost"
	Value float64 // the value given
	Rule  string  // the rule it breaks
}

func (e *ArgError) Error() string {
	return fmt.Sprintf("tokenbucket: %s = %v: %s", e.Field, e.Value, e.Rule)
}

// Never is what RetryAfter reports when no wait of at most math.MaxInt64-1
// milliseconds within the clock's range would refill the bucket enough (a
// refill rate so small that the wait overflows the clock). No real wait
// equals Never.
const Never = math.MaxInt64

// CheckArgs validates lim and, when withCost is set, cost, exactly as every
// method of Table does (T9): capacity first, then refill_per_second, then
// cost. It returns the first violation as an *ArgError, or nil. Other
// backends of the same buckets (impl/redis/tokenbucket) call it, so that
// they refuse the same arguments with the same errors.
func CheckArgs(lim Limits, cost float64, withCost bool) error { return check(lim, cost, withCost) }

// A Decision is what Admit answers: whether the take was admitted, the
// tokens it left, and for a refusal how long until the same take would be
// admitted if nobody else took from the bucket.
type Decision struct {
	// OK: the take was admitted and cost removed.
	OK bool
	// Remaining is the tokens left after an admitted take (0 for a
	// refusal).
	Remaining float64
	// RetryAfterMs is, for a refusal, the smallest whole number of
	// milliseconds after the take's reading at which the bucket covers
	// cost (T7: at least 1), or Never; 0 when OK.
	RetryAfterMs int64
}
