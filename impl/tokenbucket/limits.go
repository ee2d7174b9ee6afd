package tokenbucket

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

// check validates lim and, when withCost is set, cost: capacity first, then
// refill_per_second, then cost (T9).
func check(lim Limits, cost float64, withCost bool) error {
	const finitePositive = "must be finite and greater than zero"
	switch {
	case !(lim.Capacity > 0 && lim.Capacity <= math.MaxFloat64):
		return &ArgError{"capacity", lim.Capacity, finitePositive}
	case !(lim.RefillPerSecond > 0 && lim.RefillPerSecond <= math.MaxFloat64):
		return &ArgError{"refill_per_second", lim.RefillPerSecond, finitePositive}
	case !withCost:
		return nil
	case !(cost > 0 && cost <= math.MaxFloat64):
		return &ArgError{"cost", cost, finitePositive}
	case cost > lim.Capacity:
		return &ArgError{"cost", cost, fmt.Sprintf("must not exceed capacity %v, or it could never be taken", lim.Capacity)}
	}
	return nil
}
