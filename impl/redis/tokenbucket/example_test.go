package tokenbucket_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/tollgate/tollgate/impl/redis/tokenbucket"
)

// Every server of a fleet makes the same table on the shared Redis and
// takes from it; a timed-out take is not a refusal. (This example needs a
// server, so it is compiled but not run.)
func Example() {
	ctx := context.Background()
	t, err := tokenbucket.New(ctx, &goredis.Options{Addr: "localhost:6379", ReadTimeout: 50 * time.Millisecond}, "api")
	if err != nil {
		log.Fatal(err)
	}
	defer t.Close()
	lim := tokenbucket.Limits{Capacity: 10, RefillPerSecond: 5} // bursts of 10, then 5 per second
	_, ok, err := t.Take(ctx, "user:42", lim, 1)
	switch {
	case errors.Is(err, tokenbucket.ErrUnknown):
		// The take may have committed: serve the request, or not, but do
		// not send it again as if it had been refused.
		fmt.Println("outcome unknown:", err)
	case err != nil:
		fmt.Println("nothing taken:", err)
	case !ok:
		wait, _ := t.RetryAfter(ctx, "user:42", lim, 1)
		fmt.Printf("rate limited: retry in %d ms\n", wait)
	default:
		fmt.Println("admitted")
	}
}
