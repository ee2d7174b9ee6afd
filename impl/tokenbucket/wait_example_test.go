package tokenbucket_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/tollgate/tollgate/impl/tokenbucket"
)

// A caller waits for its turn instead of being refused. The clock and the
// sleep are injected (the sleep moves the clock on), so the example runs at
// once and always prints the same waits; without WithClock and WithSleep,
// Wait sleeps on the real clock.
func ExampleTable_Wait() {
	var now int64 // milliseconds
	tb := tokenbucket.New[string](
		tokenbucket.WithClock(func() int64 { return now }),
		tokenbucket.WithSleep(func(ctx context.Context, d time.Duration) error {
			fmt.Println("  sleep", d)
			now += d.Milliseconds()
			return nil
		}),
	)
	limit := tokenbucket.Limits{Capacity: 2, RefillPerSecond: 4}

	for i := range 4 {
		remaining, err := tb.Wait(context.Background(), "upstream", limit, 1)
		fmt.Printf("wait %d done at %d ms: %v left, err %v\n", i, now, remaining, err)
	}

	// A deadline the wait would pass fails at once, without sleeping.
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err := tb.Wait(ctx, "upstream", limit, 2)
	fmt.Println("with 100 ms to spare:", errors.Is(err, tokenbucket.ErrWouldExceedDeadline))
	// Output:
	// wait 0 done at 0 ms: 1 left, err <nil>
	// wait 1 done at 0 ms: 0 left, err <nil>
	//   sleep 250ms
	// wait 2 done at 250 ms: 0 left, err <nil>
	//   sleep 250ms
	// wait 3 done at 500 ms: 0 left, err <nil>
	// with 100 ms to spare: true
}
