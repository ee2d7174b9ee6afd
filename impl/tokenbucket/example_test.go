package tokenbucket_test

import (
	"fmt"

	"github.com/tollgate/tollgate/impl/tokenbucket"
)

// A caller bursts up to capacity, is refused, and learns when to retry.
// Time is injected in milliseconds, so the example is deterministic.
func ExampleTable_TakeAt() {
	tb := tokenbucket.New[string]()
	limit := tokenbucket.Limits{Capacity: 3, RefillPerSecond: 2}

	for i := range 4 {
		remaining, ok, err := tb.TakeAt(0, "upstream", limit, 1)
		fmt.Println(i, remaining, ok, err)
	}
	wait, _ := tb.RetryAfterAt(0, "upstream", limit, 1)
	fmt.Println("retry after", wait, "ms")
	_, ok, _ := tb.TakeAt(wait, "upstream", limit, 1)
	fmt.Println("at", wait, "ms:", ok)
	// Output:
	// 0 2 true <nil>
	// 1 1 true <nil>
	// 2 0 true <nil>
	// 3 0 false <nil>
	// retry after 500 ms
	// at 500 ms: true
}

// Bad limits are refused with an error naming the field and the rule, and
// nothing is stored.
func ExampleArgError() {
	tb := tokenbucket.New[string]()
	_, _, err := tb.TakeAt(0, "k", tokenbucket.Limits{Capacity: 5, RefillPerSecond: 1}, 6)
	fmt.Println(err)
	// Output:
	// tokenbucket: cost = 6: must not exceed capacity 5, or it could never be taken
}

// An HTTP handler's admission in one call: Admit answers a refusal with
// the wait to put in a Retry-After header, computed from the very bucket
// that refused, at the same clock reading.
func ExampleTable_Admit() {
	now := int64(0)
	tb := tokenbucket.New[string](tokenbucket.WithClock(func() int64 { return now }))
	perClient, _ := tb.Bind(tokenbucket.Limits{Capacity: 2, RefillPerSecond: 0.5}, 1)

	for range 3 {
		d := perClient.Admit("10.0.0.7")
		if !d.OK {
			fmt.Printf("429, Retry-After: %d ms\n", d.RetryAfterMs)
			continue
		}
		fmt.Printf("200, %v left\n", d.Remaining)
	}
	now = 2000
	fmt.Println("two seconds later:", perClient.Admit("10.0.0.7").OK)
	// Output:
	// 200, 1 left
	// 200, 0 left
	// 429, Retry-After: 2000 ms
	// two seconds later: true
}
