package examples_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/tollgate/tollgate/examples"
	"github.com/tollgate/tollgate/impl/tokenbucket"
)

// A middleware with one bucket per client address: two requests a client,
// then one every two seconds. The clock is injected so that the example
// prints the same every run; a server leaves it out (MonotonicMs).
func Example_middleware() {
	now := int64(0)
	tb := tokenbucket.New[string](tokenbucket.WithClock(func() int64 { return now }))
	lim := tokenbucket.Limits{Capacity: 2, RefillPerSecond: 0.5}
	perClient, err := tb.Bind(lim, 1)
	if err != nil {
		panic(err) // bad limits: Bind names the field and the rule
	}
	hello := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "hello") })
	h := examples.RateLimit(perClient, func(r *http.Request) string { return r.RemoteAddr }, hello)

	// The reclaim loop: every minute, forget the buckets that are full
	// again, so the clients that went away stop holding memory
	// (tokenbucket's ReclaimEvery; cancel ctx to stop it).
	ctx, cancel := context.WithCancel(context.Background())
	go tb.ReclaimEvery(ctx, lim, time.Minute)
	defer cancel()

	get := func(client string) {
		r := httptest.NewRequest("GET", "/", nil)
		r.RemoteAddr = client
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if ra := w.Header().Get("Retry-After"); ra != "" {
			fmt.Println(client, w.Code, "Retry-After:", ra)
			return
		}
		fmt.Println(client, w.Code)
	}
	get("10.0.0.7")
	get("10.0.0.7")
	get("10.0.0.7") // refused: a token in 2 s
	get("10.0.0.8") // another client, another bucket

	now = 60_000 // a minute later both buckets are full again
	n, _ := tb.ReclaimAt(now, lim)
	fmt.Println("reclaimed", n)
	get("10.0.0.7")
	// Output:
	// 10.0.0.7 200
	// 10.0.0.7 200
	// 10.0.0.7 429 Retry-After: 2
	// 10.0.0.8 200
	// reclaimed 2
	// 10.0.0.7 200
}
